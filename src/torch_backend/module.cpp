// chorus._c10d: ProcessGroupChorus for Python, registered as torch.distributed's "chorus"
// backend by chorus/distributed.py (import chorus does it when torch is importable).
#include <torch/csrc/utils/pybind.h>

#include <pybind11/stl.h>

#include "core/error.h"
#include "rt/errors.h"
#include "torch_backend/process_group.h"

namespace py = pybind11;
using chorus::torch_backend::ProcessGroupChorus;

PYBIND11_MODULE(_c10d, m) {
  m.doc() = "chorus as a torch.distributed backend (use: import chorus; dist.init_process_group(\"chorus\"))";
  py::module_::import("torch.distributed");  // registers c10d::ProcessGroup and c10d::Store with pybind11
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const chorus::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  py::class_<ProcessGroupChorus, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupChorus>>(m, "ProcessGroupChorus")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeout_s,
                       const std::vector<std::int64_t>& global_ranks, const std::string& group_name) {
             return c10::make_intrusive<ProcessGroupChorus>(store, rank, size, timeout_s, global_ranks, group_name);
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_s"),
           py::arg("global_ranks") = std::vector<std::int64_t>{}, py::arg("group_name") = "",
           py::call_guard<py::gil_scoped_release>())
      .def(
          "backend_for",
          [](const ProcessGroupChorus& pg, const std::string& op) {
            return pg.backend_for(chorus::rt::parse_op_kind(op, "backend_for"));
          },
          py::arg("op"), "The chorus backend (or auto) that runs operation `op` (all_reduce, all_to_all_single, ...)")
      .def("abort", &ProcessGroupChorus::abort, py::arg("why") = "", py::call_guard<py::gil_scoped_release>(),
           "End this rank's part in the job (chorus.abort): operations in flight end with `why` (on mpi: the job "
           "ends), later ones fail naming it; destroy the process group and exit next")
      .def(
          "compression_stats",
          [](const ProcessGroupChorus& pg) {
            const auto s = pg.compression_stats();
            py::dict d;
            d["raw_bytes"] = s.raw_bytes;
            d["wire_bytes"] = s.wire_bytes;
            return d;
          },
          "What this rank's compressed operations (CHORUS_COMPRESSION) sent, and would have sent uncompressed");
}
