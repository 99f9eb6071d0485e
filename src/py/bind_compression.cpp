// chorus.compressed: error-bounded compressed collectives (rt/compression) for Python, run now
// (chorus.compressed.*) or queued on a Compressor's group (chorus.compressed.Compressor).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "py/py_tensor.h"
#include "rt/compression/compressed.h"
#include "rt/compression/compressor.h"
#include "rt/runtime.h"

namespace chorus::py_rt {

using rt::ReduceOp;

namespace {

// Compressed operations (chorus.compressed): float tensors only, and what they sent.
namespace cz = rt::compressed;

void compressible_tensor(const Tensor& t, std::string_view what) {
  if (!cz::compressible(t.dtype))
    throw py::type_error(fmt::format("{}: element type {} cannot be compressed (zfp compresses float32 and float64)",
                                     what, rt::to_string(t.dtype)));
}

py::dict stats_dict(const cz::Stats& st) {
  py::dict d;
  d["raw_bytes"] = st.raw_bytes;
  d["wire_bytes"] = st.wire_bytes;
  return d;
}

// A compressed collective's arguments checked (with the GIL held): the runtime's call and its
// bound, which chorus.compressed.* issue now and a Compressor queues. The call holds raw pointers
// only, no Python object (the Work keeps the tensors alive).
struct CompressedArgs {
  std::string what;  // "compressed.all_reduce", "Compressor.all_reduce", ...
  cz::ErrorBound bound;
  int world;  // ranks of the backend or group it runs on
  CompressedArgs(std::string w, const std::string& bound_text, int ranks)
      : what(std::move(w)), bound(cz::parse_error_bound(bound_text, what + ": bound")), world(ranks) {}
};

rt::Call compressed_all_reduce(const CompressedArgs& a, const py::object& tensor, ReduceOp op) {
  auto t = tensor_of(tensor, a.what + ": tensor");
  compressible_tensor(t, a.what + ": tensor");
  return rt::calls::all_reduce(t.data, t.data, t.count, t.dtype, op);
}

rt::Call compressed_all_gather(const CompressedArgs& a, const py::object& output, const py::object& input) {
  auto in = tensor_of(input, a.what + ": input", false);
  auto out = tensor_of(output, a.what + ": output");
  same_dtype(in, out, a.what);
  compressible_tensor(in, a.what + ": input");
  expect_count(out, in.count * static_cast<std::size_t>(a.world), a.what + ": output");
  return rt::calls::all_gather(in.data, out.data, in.count, in.dtype);
}

rt::Call compressed_all_to_all(const CompressedArgs& a, const py::object& output, const py::object& input) {
  auto in = tensor_of(input, a.what + ": input", false);
  auto out = tensor_of(output, a.what + ": output");
  same_dtype(in, out, a.what);
  compressible_tensor(in, a.what + ": input");
  expect_count(out, in.count, a.what + ": output");
  const std::size_t block = equal_block(in, static_cast<std::size_t>(a.world), a.what);
  return rt::calls::all_to_all_single(in.data, out.data, block, in.dtype);
}

rt::Call compressed_send(const CompressedArgs& a, const py::object& tensor, int dst) {
  auto t = tensor_of(tensor, a.what + ": tensor", false);
  compressible_tensor(t, a.what + ": tensor");
  return rt::calls::send(t.data, t.count, t.dtype, dst);
}

rt::Call compressed_recv(const CompressedArgs& a, const py::object& tensor, int src) {
  auto t = tensor_of(tensor, a.what + ": tensor");
  compressible_tensor(t, a.what + ": tensor");
  return rt::calls::recv(t.data, t.count, t.dtype, src);
}

// Issues `call` compressed under `bound` on `backend` now, without the GIL; returns what it sent:
// {raw_bytes, wire_bytes}.
py::dict run_compressed(const std::string& backend, rt::Call call, const CompressedArgs& a) {
  cz::Stats st;
  {
    py::gil_scoped_release release;
    runtime("compressed").issue(backend, rt::compressed_call(std::move(call), a.bound, &st), false);
  }
  return stats_dict(st);
}

// A Compressor that Python can close before the runtime is finalised (and that refuses use after).
class PyCompressor {
 public:
  explicit PyCompressor(const std::string& backend)
      : c_(std::make_unique<cz::Compressor>(backend)), backend_(backend) {}
  ~PyCompressor() { close(); }
  cz::Compressor& get() {
    if (!c_) throw py::value_error("Compressor: used after close()");
    return *c_;
  }
  // Queues `call` under the bound of `a` and returns a Work that keeps `keep` alive.
  py::object queue(rt::Call call, const CompressedArgs& a, std::initializer_list<py::object> keep) {
    return run(true, keep, [&](bool) { return get().issue(std::move(call), a.bound); });
  }
  int world() const { return runtime("size").size(backend_); }
  void close() {
    py::gil_scoped_release release;
    c_.reset();
  }

 private:
  std::unique_ptr<cz::Compressor> c_;
  std::string backend_;
};

}  // namespace

void bind_compression(py::module_& m) {
  // Compressed operations (rt/compression/compressed.h): blocking, float32 / float64, under an
  // error bound given as text ("abs:1e-4": |error| <= 1e-4 on every element; "prec:16": 16 bit
  // planes per block of 4 values, relative); each returns what it sent: {raw_bytes, wire_bytes}.
  auto cz_module =
      m.def_submodule("compressed", "Error-bounded compressed collectives (zfp): bound='abs:1e-4' or 'prec:16'");
  cz_module.def(
      "all_reduce",
      [](const std::string& backend, const py::object& tensor, const std::string& bound, ReduceOp op) {
        const CompressedArgs a("compressed.all_reduce", bound, runtime("size").size(backend));
        return run_compressed(backend, compressed_all_reduce(a, tensor, op), a);
      },
      py::arg("backend"), py::arg("tensor"), py::arg("bound"), py::arg("op") = ReduceOp::sum,
      "In place; op SUM or AVG; |result - exact| <= an absolute bound on every element (plus the float additions' "
      "rounding)");
  cz_module.def(
      "all_gather_into_tensor",
      [](const std::string& backend, const py::object& output, const py::object& input, const std::string& bound) {
        const CompressedArgs a("compressed.all_gather_into_tensor", bound, runtime("size").size(backend));
        return run_compressed(backend, compressed_all_gather(a, output, input), a);
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("bound"));
  cz_module.def(
      "all_to_all_single",
      [](const std::string& backend, const py::object& output, const py::object& input, const std::string& bound) {
        const CompressedArgs a("compressed.all_to_all_single", bound, runtime("size").size(backend));
        return run_compressed(backend, compressed_all_to_all(a, output, input), a);
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("bound"), "Equal blocks, block j to rank j");
  cz_module.def(
      "send",
      [](const std::string& backend, const py::object& tensor, int dst, const std::string& bound) {
        const CompressedArgs a("compressed.send", bound, runtime("size").size(backend));
        return run_compressed(backend, compressed_send(a, tensor, dst), a);
      },
      py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("bound"));
  cz_module.def(
      "recv",
      [](const std::string& backend, const py::object& tensor, int src, const std::string& bound) {
        const CompressedArgs a("compressed.recv", bound, runtime("size").size(backend));
        run_compressed(backend, compressed_recv(a, tensor, src), a);
      },
      py::arg("backend"), py::arg("tensor"), py::arg("src"), py::arg("bound"),
      "The same count, dtype and bound as the send");
  // The same collectives queued on a group of their own (rt/compression/compressor.h):
  // they overlap with the program. Collective to make and to close, like Fusion.
  py::class_<PyCompressor>(cz_module, "Compressor")
      .def(py::init([](const std::string& backend) {
             py::gil_scoped_release release;
             return std::make_unique<PyCompressor>(backend);
           }),
           py::arg("backend"), "Compressed collectives on `backend` that return a Work at once")
      .def(
          "all_reduce",
          [](PyCompressor& c, const py::object& tensor, const std::string& bound, ReduceOp op) {
            const CompressedArgs a("Compressor.all_reduce", bound, c.world());
            return c.queue(compressed_all_reduce(a, tensor, op), a, {tensor});
          },
          py::arg("tensor"), py::arg("bound"), py::arg("op") = ReduceOp::sum, "In place; op SUM or AVG; returns a Work")
      .def(
          "all_gather_into_tensor",
          [](PyCompressor& c, const py::object& output, const py::object& input, const std::string& bound) {
            const CompressedArgs a("Compressor.all_gather_into_tensor", bound, c.world());
            return c.queue(compressed_all_gather(a, output, input), a, {output, input});
          },
          py::arg("output"), py::arg("input"), py::arg("bound"), "Returns a Work")
      .def(
          "all_to_all_single",
          [](PyCompressor& c, const py::object& output, const py::object& input, const std::string& bound) {
            const CompressedArgs a("Compressor.all_to_all_single", bound, c.world());
            return c.queue(compressed_all_to_all(a, output, input), a, {output, input});
          },
          py::arg("output"), py::arg("input"), py::arg("bound"), "Equal blocks; returns a Work")
      .def(
          "send",
          [](PyCompressor& c, const py::object& tensor, int dst, const std::string& bound) {
            const CompressedArgs a("Compressor.send", bound, c.world());
            return c.queue(compressed_send(a, tensor, dst), a, {tensor});
          },
          py::arg("tensor"), py::arg("dst"), py::arg("bound"), "On the send lane, in call order; returns a Work")
      .def(
          "recv",
          [](PyCompressor& c, const py::object& tensor, int src, const std::string& bound) {
            const CompressedArgs a("Compressor.recv", bound, c.world());
            return c.queue(compressed_recv(a, tensor, src), a, {tensor});
          },
          py::arg("tensor"), py::arg("src"), py::arg("bound"),
          "On the receive lane, in call order; the same count, dtype and bound as the send; returns a Work")
      .def(
          "stats", [](PyCompressor& c) { return stats_dict(c.get().stats()); },
          "What every call so far sent: {raw_bytes, wire_bytes}")
      .def("close", &PyCompressor::close,
           "Collective: waits for the queued calls and stops (also on leaving a with block)")
      .def(
          "__enter__", [](PyCompressor& c) -> PyCompressor& { return c; }, py::return_value_policy::reference)
      .def("__exit__", [](PyCompressor& c, const py::object&, const py::object&, const py::object&) { c.close(); });
}

}  // namespace chorus::py_rt
