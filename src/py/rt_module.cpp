// chorus._rt: the runtime (src/rt) for Python, with torch.distributed's names and argument order
// (MCR-DL's API: the backend first). Tensors are anything with the buffer protocol (numpy arrays,
// bytearray) or with a .numpy() view (torch CPU tensors); they are used in place, never copied,
// except where torch's list forms need a contiguous buffer (documented per function). The GIL is
// released while an operation runs; an async operation keeps its tensors alive until it ends.
//
// This file: the module, its errors and shared types; one file per API binds the rest —
// bind_runtime.cpp (init, groups, operations), bind_fusion.cpp (Fusion), bind_compression.cpp
// (compressed); py_tensor.* turns Python objects into the runtime's arguments.
#include <pybind11/pybind11.h>

#include <exception>
#include <memory>

#include "core/error.h"
#include "py/py_tensor.h"
#include "rt/errors.h"
#include "rt/types.h"

namespace py = pybind11;
using namespace chorus;
using chorus::py_rt::PyWork;
using chorus::rt::ReduceOp;

PYBIND11_MODULE(_rt, m) {
  m.doc() = "chorus runtime bindings (use the chorus package: import chorus)";
  static py::exception<rt::CommError> comm_error(m, "CommError", PyExc_RuntimeError);
  static py::exception<rt::TimeoutError> timeout_error(m, "TimeoutError", comm_error.ptr());
  static py::exception<rt::DisagreementError> disagreement_error(m, "DisagreementError", comm_error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rt::TimeoutError& e) {
      timeout_error(e.what());
    } catch (const rt::DisagreementError& e) {
      disagreement_error(e.what());
    } catch (const rt::CommError& e) {
      comm_error(e.what());
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::enum_<ReduceOp>(m, "ReduceOp")
      .value("SUM", ReduceOp::sum)
      .value("PRODUCT", ReduceOp::prod)
      .value("MIN", ReduceOp::min)
      .value("MAX", ReduceOp::max)
      .value("AVG", ReduceOp::avg);

  py::class_<PyWork, std::shared_ptr<PyWork>>(m, "Work")
      .def("wait", &PyWork::wait, "Block until the operation ends; raises its error")
      .def("is_completed", &PyWork::is_completed);

  py_rt::bind_runtime(m);
  py_rt::bind_fusion(m);
  py_rt::bind_compression(m);
}
