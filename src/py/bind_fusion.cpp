// chorus.Fusion: tensor fusion (rt/fusion/fusion.h) for Python. Collective to make and to close
// (every rank, same order); every operation is asynchronous and returns a Work.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "py/py_tensor.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"

namespace chorus::py_rt {

using rt::ReduceOp;

namespace {

// A Fusion that Python can close before the runtime is finalised (and that refuses use after).
class PyFusion {
 public:
  PyFusion(const std::vector<std::string>& backends, const rt::FusionOptions& options)
      : fusion_(std::make_unique<rt::Fusion>(backends, options)) {}
  ~PyFusion() { close(); }
  rt::Fusion& get() {
    if (!fusion_) throw py::value_error("Fusion: used after close()");
    return *fusion_;
  }
  void close() {
    py::gil_scoped_release release;
    fusion_.reset();
  }

 private:
  std::unique_ptr<rt::Fusion> fusion_;
};

// Fusion: construction, flush, stats, close and the with block.
void bind_fusion_lifecycle(py::class_<PyFusion>& fusion) {
  fusion
      .def(py::init([](const std::vector<std::string>& backends, std::size_t buffer_bytes, std::int64_t cycle_us) {
             py::gil_scoped_release release;
             return std::make_unique<PyFusion>(backends,
                                               rt::FusionOptions{.buffer_bytes = buffer_bytes, .cycle_us = cycle_us});
           }),
           py::arg("backends"), py::arg("buffer_bytes") = std::size_t{1} << 20, py::arg("cycle_us") = 200,
           "Small all-reduces, broadcasts, reduces, all-gathers, gathers, scatters, reduce-scatters and all-to-alls "
           "fused "
           "into buffers of at most buffer_bytes (per rank), a cycle at most cycle_us after the oldest")
      .def("flush",
           [](PyFusion& f) {
             py::gil_scoped_release release;
             f.get().flush();
           })
      .def("stats",
           [](PyFusion& f) {
             const auto s = f.get().stats();
             py::dict d;
             d["ops"] = s.ops;
             d["buffers"] = s.buffers;
             d["cycles"] = s.cycles;
             return d;
           })
      .def("close", &PyFusion::close, "Collective: flushes and stops (also on leaving a with block)")
      .def(
          "__enter__", [](PyFusion& f) -> PyFusion& { return f; }, py::return_value_policy::reference)
      .def("__exit__", [](PyFusion& f, const py::object&, const py::object&, const py::object&) { f.close(); });
}

// The fused operations that work in place: all_reduce, broadcast, reduce.
void bind_fused_in_place(py::class_<PyFusion>& fusion) {
  fusion
      .def(
          "all_reduce",
          [](PyFusion& f, const std::string& backend, const py::object& tensor, ReduceOp op) {
            auto t = tensor_of(tensor, "Fusion.all_reduce: tensor");
            return run(true, {t.owner},
                       [&](bool) { return f.get().all_reduce(backend, t.data, t.data, t.count, t.dtype, op); });
          },
          py::arg("backend"), py::arg("tensor"), py::arg("op") = ReduceOp::sum,
          "In place; always asynchronous: returns a Work")
      .def(
          "broadcast",
          [](PyFusion& f, const std::string& backend, const py::object& tensor, int src) {
            auto t = tensor_of(tensor, "Fusion.broadcast: tensor");
            return run(true, {t.owner},
                       [&](bool) { return f.get().broadcast(backend, t.data, t.count, t.dtype, src); });
          },
          py::arg("backend"), py::arg("tensor"), py::arg("src"), "In place; always asynchronous: returns a Work")
      .def(
          "reduce",
          [](PyFusion& f, const std::string& backend, const py::object& tensor, int dst, ReduceOp op) {
            auto t = tensor_of(tensor, "Fusion.reduce: tensor");
            return run(true, {t.owner},
                       [&](bool) { return f.get().reduce(backend, t.data, t.data, t.count, t.dtype, op, dst); });
          },
          py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("op") = ReduceOp::sum,
          "In place, the result on rank dst; always asynchronous: returns a Work");
}

// The fused operations between an input and an output: all-gather, reduce-scatter, all-to-all, gather, scatter.
void bind_fused_buffers(py::class_<PyFusion>& fusion) {
  fusion
      .def(
          "all_gather_into_tensor",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input) {
            auto in = tensor_of(input, "Fusion.all_gather_into_tensor: input", false);
            auto out = tensor_of(output, "Fusion.all_gather_into_tensor: output");
            same_dtype(in, out, "Fusion.all_gather_into_tensor");
            expect_count(out, in.count * static_cast<std::size_t>(runtime("size").size("auto")),
                         "Fusion.all_gather_into_tensor: output");
            return run(true, {in.owner, out.owner},
                       [&](bool) { return f.get().all_gather(backend, in.data, out.data, in.count, in.dtype); });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), "Always asynchronous: returns a Work")
      .def(
          "reduce_scatter_tensor",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input, ReduceOp op) {
            auto in = tensor_of(input, "Fusion.reduce_scatter_tensor: input", false);
            auto out = tensor_of(output, "Fusion.reduce_scatter_tensor: output");
            same_dtype(in, out, "Fusion.reduce_scatter_tensor");
            expect_count(in, out.count * static_cast<std::size_t>(runtime("size").size("auto")),
                         "Fusion.reduce_scatter_tensor: input");
            return run(true, {in.owner, out.owner}, [&](bool) {
              return f.get().reduce_scatter(backend, in.data, out.data, out.count, out.dtype, op);
            });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("op") = ReduceOp::sum,
          "Always asynchronous: returns a Work")
      .def(
          "all_to_all_single",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input,
             const py::object& output_split_sizes, const py::object& input_split_sizes) {
            const auto a = all_to_all_args(output, input, output_split_sizes, input_split_sizes,
                                           runtime("size").size("auto"), "Fusion.all_to_all_single");
            return run(true, {a.in.owner, a.out.owner}, [&](bool) {
              return a.uneven ? f.get().all_to_allv(backend, a.in.data, a.send_counts, a.send_displs, a.out.data,
                                                    a.recv_counts, a.recv_displs, a.in.dtype)
                              : f.get().all_to_all_single(backend, a.in.data, a.out.data, a.block, a.in.dtype);
            });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("output_split_sizes") = py::none(),
          py::arg("input_split_sizes") = py::none(),
          "Equal blocks, or split sizes counting rows as in torch; always asynchronous: returns a Work")
      .def(
          "gather",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input, int dst) {
            auto in = tensor_of(input, "Fusion.gather: input", false);
            const auto out =
                root_tensor(output, runtime("rank").rank("auto") == dst, in, true, "Fusion.gather: output");
            return run(true, {in.owner, output}, [&](bool) {
              return f.get().gather(backend, in.data, out ? out->data : nullptr, in.count, in.dtype, dst);
            });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("dst"),
          "output (world size x input, block j from rank j) on rank dst, None elsewhere; always asynchronous")
      .def(
          "scatter",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input, int src) {
            auto out = tensor_of(output, "Fusion.scatter: output");
            const auto in =
                root_tensor(input, runtime("rank").rank("auto") == src, out, false, "Fusion.scatter: input");
            return run(true, {out.owner, input}, [&](bool) {
              return f.get().scatter(backend, in ? in->data : nullptr, out.data, out.count, out.dtype, src);
            });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("src"),
          "input (world size x output, block j to rank j) on rank src, None elsewhere; always asynchronous");
}

}  // namespace

void bind_fusion(py::module_& m) {
  py::class_<PyFusion> fusion(m, "Fusion");
  bind_fusion_lifecycle(fusion);
  bind_fused_in_place(fusion);
  bind_fused_buffers(fusion);
}

}  // namespace chorus::py_rt
