// chorus._rt's runtime: init, groups, and the operations with torch.distributed's names and
// argument order (MCR-DL's API: the backend first). Tensors are used in place, never copied,
// except where torch's list forms need a contiguous buffer (documented per function).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "py/py_tensor.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime_instance.h"

namespace chorus::py_rt {

using rt::ReduceOp;

namespace {

rt::Work issue(const std::string& backend, rt::Call call, bool async_op) {
  const rt::ScopedFlightLayer layer(rt::FlightLayer::kPython);
  return runtime(to_string(call.op)).issue(backend, std::move(call), async_op);
}

// init, finalize, the world, groups and algorithms.
void bind_lifecycle(py::module_& m) {
  m.def("available_backends", &rt::available_backends);
  m.def(
      "init",
      [](const std::vector<std::string>& backends, double timeout_s, int check, const std::string& tuning_table,
         const std::string& log) {
        rt::InitOptions o;
        o.timeout_s = timeout_s;
        o.check = check;
        o.tuning_table = tuning_table;
        o.log = log;
        py::gil_scoped_release release;
        rt::init(backends, o);
      },
      py::arg("backends"), py::arg("timeout_s") = -1.0, py::arg("check") = -1, py::arg("tuning_table") = "",
      py::arg("log") = "", "log: PREFIX for the communication log (PREFIX.<rank>.jsonl; chorus profile PREFIX)");
  m.def("finalize", [] {
    py::gil_scoped_release release;
    rt::finalize();
  });
  m.def(
      "dump",
      [] {
        py::gil_scoped_release release;
        return runtime("dump").dump_flight_record("python");
      },
      "write this rank's flight record (its last operations per communicator, JSON) to CHORUS_RT_DUMP's directory "
      "and return its path; chorus doctor DIR reads the records of all ranks");
  m.def(
      "mark_step", [] { runtime("mark_step").mark_step(); },
      "mark the end of one training step in this rank's flight record (chorus doctor then counts each rank's calls "
      "per step, and names a rank that skipped one)");
  m.def(
      "abort",
      [](const std::string& why) {
        py::gil_scoped_release release;
        runtime("abort").abort(why);
      },
      py::arg("why") = "",
      "end this rank's part in the job: every backend unusable (calls fail at once naming `why`), shm and gloo "
      "operations in flight end (an mpi one ends the job), the flight record is written and the peers told; exit the "
      "process next");
  m.def("is_initialized", &rt::is_initialized);
  m.def("backends", &rt::backends);
  m.def(
      "size", [](const std::string& b) { return runtime("size").size(b); }, py::arg("backend") = "auto");
  m.def(
      "rank", [](const std::string& b) { return runtime("rank").rank(b); }, py::arg("backend") = "auto");
  m.def("_mpirun_tcp_endpoint", &rt::mpi_agree_tcp_endpoint, py::call_guard<py::gil_scoped_release>(),
        "Under mpirun: 'host:port' free on rank 0, the same on every rank (chorus.distributed sets MASTER_ADDR/PORT)");
  m.def(
      "synchronize",
      [](const std::vector<std::string>& b) {
        py::gil_scoped_release release;
        runtime("synchronize").synchronize(b);
      },
      py::arg("backends") = std::vector<std::string>{});
  m.def(
      "split",
      [](const std::string& name, const std::string& backend, int color, int key) {
        py::gil_scoped_release release;
        runtime("split").split(name, backend, color, key);
      },
      py::arg("name"), py::arg("backend"), py::arg("color"), py::arg("key") = 0);
  m.def(
      "new_group",
      [](const std::string& name, const std::vector<int>& ranks, const std::string& backend) {
        py::gil_scoped_release release;
        runtime("new_group").new_group(name, ranks, backend);
      },
      py::arg("name"), py::arg("ranks"), py::arg("backend") = "auto");
  m.def("group_ranks", [](const std::string& name) { return runtime("group_ranks").group_ranks(name); });
  m.def(
      "algorithm_names",
      [](const std::string& backend, const std::string& op) {
        return runtime("algorithm_names").algorithm_names(backend, rt::parse_op_kind(op, "algorithm_names: op"));
      },
      py::arg("backend"), py::arg("op") = "all_reduce",
      "the named algorithms of `op` (all_reduce, broadcast, all_gather, reduce_scatter, all_to_all_single) on "
      "`backend` "
      "besides 'default': all_reduce('mpi:ring', t) or broadcast('mpi:binomial', t) runs one");
}

// all_reduce, broadcast, reduce, all_gather.
void bind_reductions_and_all_gathers(py::module_& m) {
  m.def(
      "all_reduce",
      [](const std::string& backend, const py::object& tensor, ReduceOp op, bool async_op) {
        auto t = tensor_of(tensor, "all_reduce: tensor");
        return run(async_op, {t.owner}, [&](bool a) {
          return issue(backend, rt::calls::all_reduce(t.data, t.data, t.count, t.dtype, op), a);
        });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("op") = ReduceOp::sum, py::arg("async_op") = false,
      "In place on every rank, as torch.distributed.all_reduce");
  m.def(
      "broadcast",
      [](const std::string& backend, const py::object& tensor, int src, bool async_op) {
        auto t = tensor_of(tensor, "broadcast: tensor");
        return run(async_op, {t.owner},
                   [&](bool a) { return issue(backend, rt::calls::broadcast(t.data, t.count, t.dtype, src), a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("src"), py::arg("async_op") = false);
  m.def(
      "reduce",
      [](const std::string& backend, const py::object& tensor, int dst, ReduceOp op, bool async_op) {
        auto t = tensor_of(tensor, "reduce: tensor");
        return run(async_op, {t.owner}, [&](bool a) {
          return issue(backend, rt::calls::reduce(t.data, t.data, t.count, t.dtype, op, dst), a);
        });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("op") = ReduceOp::sum, py::arg("async_op") = false,
      "The result lands in `tensor` on rank dst");
  m.def(
      "all_gather_into_tensor",
      [](const std::string& backend, const py::object& output, const py::object& input, bool async_op) {
        auto in = tensor_of(input, "all_gather_into_tensor: input", false);
        auto out = tensor_of(output, "all_gather_into_tensor: output");
        same_dtype(in, out, "all_gather_into_tensor");
        expect_count(out, in.count * static_cast<std::size_t>(runtime("size").size(backend)),
                     "all_gather_into_tensor: output");
        return run(async_op, {in.owner, out.owner}, [&](bool a) {
          return issue(backend, rt::calls::all_gather(in.data, out.data, in.count, in.dtype), a);
        });
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("async_op") = false);
  m.def(
      "all_gather",
      [](const std::string& backend, const py::list& tensor_list, const py::object& tensor, bool async_op) {
        auto in = tensor_of(tensor, "all_gather: tensor", false);
        auto outs = tensors_of(tensor_list, "all_gather: tensor_list", true);
        if (outs.size() != static_cast<std::size_t>(runtime("size").size(backend)))
          throw py::value_error(fmt::format("all_gather: tensor_list has {} tensors for {} ranks", outs.size(),
                                            runtime("size").size(backend)));
        for (std::size_t i = 0; i < outs.size(); ++i) {
          same_dtype(in, outs[i], fmt::format("all_gather: tensor_list[{}]", i));
          expect_count(outs[i], in.count, fmt::format("all_gather: tensor_list[{}]", i));
        }
        // Torch's list form: gathered into one staging buffer, then copied out.
        const std::size_t bytes = in.count * rt::dtype_bytes(in.dtype);
        auto staging = staging_buffer(bytes * outs.size());
        return run(
            async_op, {in.owner, tensor_list},
            [&](bool a) {
              return issue(backend, rt::calls::all_gather(in.data, staging->get(), in.count, in.dtype), a);
            },
            [outs, staging, bytes] {
              for (std::size_t i = 0; i < outs.size(); ++i)
                std::memcpy(outs[i].data, staging->get() + i * bytes, bytes);
            });
      },
      py::arg("backend"), py::arg("tensor_list"), py::arg("tensor"), py::arg("async_op") = false,
      "torch's list form (one staging copy); all_gather_into_tensor has none");
  // torch's gather and scatter: lists at the root only (None elsewhere), one staging copy there.
}

// gather, scatter and reduce_scatter.
void bind_gather_scatter(py::module_& m) {
  m.def(
      "gather",
      [](const std::string& backend, const py::object& tensor, const py::object& gather_list, int dst, bool async_op) {
        auto in = tensor_of(tensor, "gather: tensor", false);
        const bool root = runtime("rank").rank(backend) == dst;
        const auto outs = root_list(gather_list, root, in, backend, "gather: gather_list", true);
        const std::size_t bytes = in.count * rt::dtype_bytes(in.dtype);
        auto staging = staging_buffer(bytes * outs.size());
        return run(
            async_op, {in.owner, gather_list},
            [&](bool a) {
              return issue(backend,
                           rt::calls::gather(in.data, root ? staging->get() : nullptr, in.count, in.dtype, dst), a);
            },
            [outs, staging, bytes] {
              for (std::size_t i = 0; i < outs.size(); ++i)
                std::memcpy(outs[i].data, staging->get() + i * bytes, bytes);
            });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("gather_list") = py::none(), py::arg("dst") = 0,
      py::arg("async_op") = false, "torch's gather: gather_list (one tensor per rank) on rank dst only");
  m.def(
      "scatter",
      [](const std::string& backend, const py::object& tensor, const py::object& scatter_list, int src, bool async_op) {
        auto out = tensor_of(tensor, "scatter: tensor");
        const bool root = runtime("rank").rank(backend) == src;
        const auto ins = root_list(scatter_list, root, out, backend, "scatter: scatter_list", false);
        const std::size_t bytes = out.count * rt::dtype_bytes(out.dtype);
        auto staging = staging_buffer(bytes * ins.size());
        for (std::size_t i = 0; i < ins.size(); ++i) std::memcpy(staging->get() + i * bytes, ins[i].data, bytes);
        return run(
            async_op, {out.owner, scatter_list},
            [&](bool a) {
              return issue(backend,
                           rt::calls::scatter(root ? staging->get() : nullptr, out.data, out.count, out.dtype, src), a);
            },
            [staging] {});
      },
      py::arg("backend"), py::arg("tensor"), py::arg("scatter_list") = py::none(), py::arg("src") = 0,
      py::arg("async_op") = false, "torch's scatter: scatter_list (one tensor per rank) on rank src only");
  m.def(
      "reduce_scatter_tensor",
      [](const std::string& backend, const py::object& output, const py::object& input, ReduceOp op, bool async_op) {
        auto in = tensor_of(input, "reduce_scatter_tensor: input", false);
        auto out = tensor_of(output, "reduce_scatter_tensor: output");
        same_dtype(in, out, "reduce_scatter_tensor");
        expect_count(in, out.count * static_cast<std::size_t>(runtime("size").size(backend)),
                     "reduce_scatter_tensor: input");
        return run(async_op, {in.owner, out.owner}, [&](bool a) {
          return issue(backend, rt::calls::reduce_scatter(in.data, out.data, out.count, out.dtype, op), a);
        });
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("op") = ReduceOp::sum,
      py::arg("async_op") = false);
}

// all_to_all in its forms, send, recv, barrier.
void bind_exchanges(py::module_& m) {
  m.def(
      "all_to_all_single",
      [](const std::string& backend, const py::object& output, const py::object& input,
         const py::object& output_split_sizes, const py::object& input_split_sizes, bool async_op) {
        const auto a = all_to_all_args(output, input, output_split_sizes, input_split_sizes,
                                       runtime("size").size(backend), "all_to_all_single");
        return run(async_op, {a.in.owner, a.out.owner}, [&](bool async) {
          return a.uneven
                     ? issue(backend,
                             rt::calls::all_to_allv(a.in.data, a.send_counts, a.send_displs, a.out.data, a.recv_counts,
                                                    a.recv_displs, a.in.dtype),
                             async)
                     : issue(backend, rt::calls::all_to_all_single(a.in.data, a.out.data, a.block, a.in.dtype), async);
        });
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("output_split_sizes") = py::none(),
      py::arg("input_split_sizes") = py::none(), py::arg("async_op") = false,
      "Split sizes count rows (the first dimension), as in torch");
  m.def(
      "all_to_all",
      [](const std::string& backend, const py::list& output_tensor_list, const py::list& input_tensor_list,
         bool async_op) {
        auto ins = tensors_of(input_tensor_list, "all_to_all: input_tensor_list", false);
        auto outs = tensors_of(output_tensor_list, "all_to_all: output_tensor_list", true);
        const auto world = static_cast<std::size_t>(runtime("size").size(backend));
        if (ins.size() != world || outs.size() != world)
          throw py::value_error(
              fmt::format("all_to_all: {} inputs and {} outputs for {} ranks", ins.size(), outs.size(), world));
        std::vector<const void*> in_ptrs;
        std::vector<void*> out_ptrs;
        rt::Counts in_counts, out_counts;
        for (std::size_t i = 0; i < world; ++i) {
          same_dtype(ins[0], ins[i], fmt::format("all_to_all: input_tensor_list[{}]", i));
          same_dtype(ins[0], outs[i], fmt::format("all_to_all: output_tensor_list[{}]", i));
          in_ptrs.push_back(ins[i].data);
          out_ptrs.push_back(outs[i].data);
          in_counts.push_back(ins[i].count);
          out_counts.push_back(outs[i].count);
        }
        return run(async_op, {input_tensor_list, output_tensor_list}, [&](bool a) {
          return issue(backend, rt::calls::all_to_all(in_ptrs, in_counts, out_ptrs, out_counts, ins[0].dtype), a);
        });
      },
      py::arg("backend"), py::arg("output_tensor_list"), py::arg("input_tensor_list"), py::arg("async_op") = false,
      "torch's list form, no copies");
  m.def(
      "send",
      [](const std::string& backend, const py::object& tensor, int dst, bool async_op) {
        auto t = tensor_of(tensor, "send: tensor", false);
        return run(async_op, {t.owner},
                   [&](bool a) { return issue(backend, rt::calls::send(t.data, t.count, t.dtype, dst), a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("async_op") = false);
  m.def(
      "recv",
      [](const std::string& backend, const py::object& tensor, int src, bool async_op) {
        auto t = tensor_of(tensor, "recv: tensor");
        return run(async_op, {t.owner},
                   [&](bool a) { return issue(backend, rt::calls::recv(t.data, t.count, t.dtype, src), a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("src"), py::arg("async_op") = false);
  // For bench/python/bench_py_overhead.py: the same blocking in-place all_reduce looped in C++;
  // returns the loop's time in microseconds, so the Python layer's cost is measured in one process.
  m.def(
      "_loop_all_reduce",
      [](const std::string& backend, const py::object& tensor, int iters) {
        auto t = tensor_of(tensor, "_loop_all_reduce: tensor");
        py::gil_scoped_release release;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i)
          issue(backend, rt::calls::all_reduce(t.data, t.data, t.count, t.dtype, ReduceOp::sum), false);
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      },
      py::arg("backend"), py::arg("tensor"), py::arg("iters"));
  m.def(
      "barrier",
      [](const std::string& backend, bool async_op) {
        return run(async_op, {}, [&](bool a) { return issue(backend, rt::calls::barrier(), a); });
      },
      py::arg("backend") = "auto", py::arg("async_op") = false);
}

}  // namespace

void bind_runtime(py::module_& m) {
  bind_lifecycle(m);
  bind_reductions_and_all_gathers(m);
  bind_gather_scatter(m);
  bind_exchanges(m);
}

}  // namespace chorus::py_rt
