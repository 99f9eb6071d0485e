// chorus._rt: the runtime (src/rt) for Python, with torch.distributed's names and argument order
// (MCR-DL's API: the backend first). Tensors are anything with the buffer protocol (numpy arrays,
// bytearray) or with a .numpy() view (torch CPU tensors); they are used in place, never copied,
// except where torch's list forms need a contiguous buffer (documented per function). The GIL is
// released while an operation runs; an async operation keeps its tensors alive until it ends.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/compression/compressed.h"
#include "rt/compression/compressor.h"
#include "rt/errors.h"
#include "rt/fusion/fusion.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime.h"
#include "rt/types.h"
#include "rt/work.h"

namespace py = pybind11;
using namespace chorus;
using chorus::rt::DType;
using chorus::rt::ReduceOp;

namespace {

// A contiguous tensor's memory, element type and count, rows (its first dimension), and the
// object that owns the memory (kept referenced while an operation uses it).
struct Tensor {
  py::object owner;
  void* data = nullptr;
  std::size_t count = 0;
  std::size_t rows = 1;
  DType dtype = DType::f32;
};

DType dtype_of(const Py_buffer& b, std::string_view what) {
  std::string_view f = b.format ? b.format : "B";
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) f.remove_prefix(1);
  if (f == "e") return DType::f16;
  if (f == "f") return DType::f32;
  if (f == "d") return DType::f64;
  if (f == "b") return DType::i8;
  if (f == "B") return DType::u8;
  if ((f == "i" || f == "l" || f == "q") && b.itemsize == 4) return DType::i32;
  if ((f == "i" || f == "l" || f == "q") && b.itemsize == 8) return DType::i64;
  throw py::type_error(fmt::format("{}: element type '{}' ({} bytes) is not one chorus reduces: float16, bfloat16 (torch), float32, float64, int8, "
                                   "uint8, int32, int64", what, f, b.itemsize));
}

// The hot path of every call: one PyObject_GetBuffer asking the exporter for a C-contiguous
// view (numpy refuses a strided array itself), no allocation. The view is released at once; the
// reference in `owner` keeps the memory (an array with references cannot be resized).
Tensor tensor_of(const py::object& obj, std::string_view what, bool writable = true) {
  py::object view = obj;
  bool bf16 = false;
  if (!PyObject_CheckBuffer(obj.ptr())) {
    if (!py::hasattr(obj, "numpy"))
      throw py::type_error(fmt::format("{}: expected a numpy array or a torch CPU tensor, got {}", what,
                                       py::str(py::type::of(obj)).cast<std::string>()));
    try {
      view = obj.attr("numpy")();  // torch: a view of the same memory
    } catch (py::error_already_set&) {
      // numpy has no bfloat16: the same memory viewed as int16, reduced as bfloat16.
      if (py::str(obj.attr("dtype")).cast<std::string>() != "torch.bfloat16") throw;
      view = obj.attr("view")(py::module_::import("torch").attr("int16")).attr("numpy")();
      bf16 = true;
    }
  }
  Py_buffer b;
  if (PyObject_GetBuffer(view.ptr(), &b, PyBUF_FORMAT | PyBUF_ND | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) != 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer(view.ptr(), &b, PyBUF_FORMAT | PyBUF_STRIDES) == 0) {
      const bool read_only = writable && b.readonly;
      PyBuffer_Release(&b);
      if (read_only) throw py::value_error(fmt::format("{}: the tensor is read-only, and the operation writes it", what));
      throw py::value_error(fmt::format("{}: the tensor is not contiguous (call .contiguous() or numpy.ascontiguousarray)", what));
    }
    PyErr_Clear();
    throw py::type_error(fmt::format("{}: cannot read the tensor's memory", what));
  }
  Tensor t;
  t.owner = obj;
  t.data = b.buf;
  t.count = b.itemsize > 0 ? static_cast<std::size_t>(b.len / b.itemsize) : 0;
  t.rows = b.ndim > 0 && b.shape ? static_cast<std::size_t>(b.shape[0]) : 1;
  try {
    t.dtype = bf16 ? DType::bf16 : dtype_of(b, what);
  } catch (...) {
    PyBuffer_Release(&b);
    throw;
  }
  PyBuffer_Release(&b);
  return t;
}

std::vector<Tensor> tensors_of(const py::sequence& list, std::string_view what, bool writable) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(tensor_of(list[i], fmt::format("{}[{}]", what, i), writable));
  return out;
}

void same_dtype(const Tensor& a, const Tensor& b, std::string_view what) {
  if (a.dtype != b.dtype)
    throw py::type_error(fmt::format("{}: element types differ ({} and {})", what, rt::to_string(a.dtype), rt::to_string(b.dtype)));
}

void expect_count(const Tensor& t, std::size_t count, std::string_view what) {
  if (t.count != count) throw py::value_error(fmt::format("{}: has {} elements, expected {}", what, t.count, count));
}

// gather's and scatter's list: one tensor per rank of `like`'s dtype and size at the root, None
// elsewhere (as torch.distributed requires).
std::vector<Tensor> root_list(const py::object& list, bool root, const Tensor& like, const std::string& backend,
                              const std::string& what, bool writable) {
  if (!root) {
    if (!list.is_none()) throw py::value_error(fmt::format("{}: give it on the root rank only (None here)", what));
    return {};
  }
  if (list.is_none()) throw py::value_error(fmt::format("{}: required on the root rank", what));
  auto tensors = tensors_of(list.cast<py::sequence>(), what, writable);
  if (tensors.size() != static_cast<std::size_t>(rt::size(backend)))
    throw py::value_error(fmt::format("{}: {} tensors for {} ranks", what, tensors.size(), rt::size(backend)));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    same_dtype(like, tensors[i], fmt::format("{}[{}]", what, i));
    expect_count(tensors[i], like.count, fmt::format("{}[{}]", what, i));
  }
  return tensors;
}

// A fused gather's output or scatter's input: world size x `like` at the root, None elsewhere.
std::optional<Tensor> root_tensor(const py::object& obj, bool root, const Tensor& like, bool writable, const std::string& what) {
  if (root == obj.is_none())
    throw py::value_error(fmt::format("{}: a tensor of world size x {} elements on the root rank, None elsewhere", what, like.count));
  if (!root) return std::nullopt;
  auto t = tensor_of(obj, what, writable);
  same_dtype(like, t, what);
  expect_count(t, like.count * static_cast<std::size_t>(rt::size("auto")), what);
  return t;
}

// Elements per block of an all-to-all of equal blocks over `world` ranks.
std::size_t equal_block(const Tensor& t, std::size_t world, std::string_view what) {
  if (t.count % world)
    throw py::value_error(fmt::format("{}: {} elements do not split evenly over {} ranks", what, t.count, world));
  return t.count / world;
}

// An operation in flight: the runtime's handle, the Python objects whose memory it uses, and what
// to do once it ends (copy a staging buffer into torch's output list).
class PyWork {
 public:
  PyWork(rt::Work w, std::vector<py::object> keep, std::function<void()> finish)
      : work_(std::move(w)), keep_(std::move(keep)), finish_(std::move(finish)) {}
  ~PyWork() {
    if (!waited_) {
      py::gil_scoped_release release;
      try {
        work_.wait();
      } catch (...) {  // the error was the caller's to collect with wait(); the buffers stay valid until here
      }
    }
  }
  void wait() {
    if (waited_) return;
    {
      py::gil_scoped_release release;
      work_.wait();
    }
    waited_ = true;
    if (finish_) finish_();
  }
  bool is_completed() const { return work_.test(); }

 private:
  rt::Work work_;
  std::vector<py::object> keep_;
  std::function<void()> finish_;
  bool waited_ = false;
};

// Runs `call(async_op)` without the GIL. Async: returns a Work that keeps `keep` alive and runs
// `finish` when waited for. Blocking: the runtime's blocking call (inline on this thread when the
// backend is idle), then `finish`; returns None, as torch.distributed does. No allocation on the
// blocking path (the Python layer's cost: bench/python/bench_py_overhead.py).
template <typename Call>
py::object run(bool async_op, std::initializer_list<py::object> keep, const Call& call, std::function<void()> finish = nullptr) {
  rt::Work w;
  {
    py::gil_scoped_release release;
    w = call(async_op);
  }
  if (async_op) return py::cast(std::make_shared<PyWork>(std::move(w), std::vector<py::object>(keep), std::move(finish)));
  if (finish) finish();
  return py::none();
}

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

// A staging buffer as a bytes-like object the Work keeps alive.
struct Staging {
  std::vector<unsigned char> bytes;
};

rt::Counts split_counts(const py::object& sizes, const Tensor& t, int world, const std::string& what) {
  const std::size_t rows = t.rows;
  const std::size_t per_row = rows == 0 ? 0 : t.count / rows;
  rt::Counts counts;
  if (sizes.is_none()) {
    counts.assign(static_cast<std::size_t>(world), equal_block(t, static_cast<std::size_t>(world), what));
    return counts;
  }
  const auto list = sizes.cast<std::vector<long long>>();
  if (list.size() != static_cast<std::size_t>(world))
    throw py::value_error(fmt::format("{}: {} split sizes for {} ranks", what, list.size(), world));
  std::size_t total = 0;
  for (auto s : list) {
    if (s < 0) throw py::value_error(fmt::format("{}: split size {} is negative", what, s));
    counts.push_back(static_cast<std::size_t>(s) * per_row);
    total += static_cast<std::size_t>(s);
  }
  if (total != rows) throw py::value_error(fmt::format("{}: split sizes add up to {}, the tensor has {} rows", what, total, rows));
  return counts;
}

// Compressed operations (chorus.compressed): float tensors only, and what they sent.
namespace cz = rt::compressed;

void compressible_tensor(const Tensor& t, std::string_view what) {
  if (!cz::compressible(t.dtype))
    throw py::type_error(fmt::format("{}: element type {} cannot be compressed (zfp compresses float32 and float64)", what,
                                     rt::to_string(t.dtype)));
}

py::dict stats_dict(const cz::Stats& st) {
  py::dict d;
  d["raw_bytes"] = st.raw_bytes;
  d["wire_bytes"] = st.wire_bytes;
  return d;
}

// A compressed collective with its arguments checked (with the GIL held), ready to run on any
// backend or group: chorus.compressed.* run it now, a Compressor queues it. It captures raw
// pointers only, no Python object: a Compressor copies and destroys it without the GIL (the
// Work keeps the tensors alive).
using CompressedCall = std::function<void(const std::string& backend, cz::Stats* stats)>;
struct CompressedArgs {
  std::string what;  // "compressed.all_reduce", "Compressor.all_reduce", ...
  cz::ErrorBound bound;
  int world;  // ranks of the backend or group it runs on
  CompressedArgs(std::string w, const std::string& bound_text, int ranks)
      : what(std::move(w)), bound(cz::parse_error_bound(bound_text, what + ": bound")), world(ranks) {}
};

CompressedCall compressed_all_reduce(const CompressedArgs& a, const py::object& tensor, ReduceOp op) {
  auto t = tensor_of(tensor, a.what + ": tensor");
  compressible_tensor(t, a.what + ": tensor");
  return [p = t.data, n = t.count, d = t.dtype, op, b = a.bound](const std::string& backend, cz::Stats* st) {
    cz::all_reduce(backend, p, p, n, d, op, b, st);
  };
}

CompressedCall compressed_all_gather(const CompressedArgs& a, const py::object& output, const py::object& input) {
  auto in = tensor_of(input, a.what + ": input", false);
  auto out = tensor_of(output, a.what + ": output");
  same_dtype(in, out, a.what);
  compressible_tensor(in, a.what + ": input");
  expect_count(out, in.count * static_cast<std::size_t>(a.world), a.what + ": output");
  return [i = in.data, o = out.data, n = in.count, d = in.dtype, b = a.bound](const std::string& backend, cz::Stats* st) {
    cz::all_gather(backend, i, o, n, d, b, st);
  };
}

CompressedCall compressed_all_to_all(const CompressedArgs& a, const py::object& output, const py::object& input) {
  auto in = tensor_of(input, a.what + ": input", false);
  auto out = tensor_of(output, a.what + ": output");
  same_dtype(in, out, a.what);
  compressible_tensor(in, a.what + ": input");
  expect_count(out, in.count, a.what + ": output");
  const std::size_t block = equal_block(in, static_cast<std::size_t>(a.world), a.what);
  return [i = in.data, o = out.data, block, d = in.dtype, b = a.bound](const std::string& backend, cz::Stats* st) {
    cz::all_to_all_single(backend, i, o, block, d, b, st);
  };
}

CompressedCall compressed_send(const CompressedArgs& a, const py::object& tensor, int dst) {
  auto t = tensor_of(tensor, a.what + ": tensor", false);
  compressible_tensor(t, a.what + ": tensor");
  return [p = t.data, n = t.count, d = t.dtype, dst, b = a.bound](const std::string& backend, cz::Stats* st) {
    cz::send(backend, p, n, d, dst, b, st);
  };
}

CompressedCall compressed_recv(const CompressedArgs& a, const py::object& tensor, int src) {
  auto t = tensor_of(tensor, a.what + ": tensor");
  compressible_tensor(t, a.what + ": tensor");
  return [p = t.data, n = t.count, d = t.dtype, src, b = a.bound](const std::string& backend, cz::Stats* st) {
    cz::recv(backend, p, n, d, src, b, st);
  };
}

// Runs `call` on `backend` now, without the GIL; returns what it sent: {raw_bytes, wire_bytes}.
py::dict run_compressed(const std::string& backend, const CompressedCall& call) {
  cz::Stats st;
  {
    py::gil_scoped_release release;
    call(backend, &st);
  }
  return stats_dict(st);
}

// A Compressor that Python can close before the runtime is finalised (and that refuses use after).
class PyCompressor {
 public:
  explicit PyCompressor(const std::string& backend) : c_(std::make_unique<cz::Compressor>(backend)), backend_(backend) {}
  ~PyCompressor() { close(); }
  cz::Compressor& get() {
    if (!c_) throw py::value_error("Compressor: used after close()");
    return *c_;
  }
  // Queues `call` on `lane` and returns a Work that keeps `keep` alive.
  py::object queue(const std::string& what, const CompressedCall& call, std::initializer_list<py::object> keep,
                   cz::Compressor::LaneKind lane = cz::Compressor::LaneKind::collective) {
    return run(true, keep, [&](bool) { return get().run(what, call, nullptr, lane); });
  }
  int world() const { return rt::size(backend_); }
  void close() {
    py::gil_scoped_release release;
    c_.reset();
  }

 private:
  std::unique_ptr<cz::Compressor> c_;
  std::string backend_;
};


rt::Counts displacements(const rt::Counts& counts) {
  rt::Counts d;
  std::size_t at = 0;
  for (auto c : counts) {
    d.push_back(at);
    at += c;
  }
  return d;
}

// all_to_all_single's arguments, as chorus.all_to_all_single and Fusion.all_to_all_single take
// them: equal blocks (no split sizes), or split sizes counting rows as in torch.
struct AllToAllArgs {
  Tensor in, out;
  bool uneven = false;
  std::size_t block = 0;                      // equal blocks: elements per rank
  rt::Counts send_counts, send_displs, recv_counts, recv_displs;  // uneven: elements per rank
};

AllToAllArgs all_to_all_args(const py::object& output, const py::object& input, const py::object& output_split_sizes,
                             const py::object& input_split_sizes, int world, const std::string& what) {
  AllToAllArgs a;
  a.in = tensor_of(input, what + ": input", false);
  a.out = tensor_of(output, what + ": output");
  same_dtype(a.in, a.out, what);
  if (output_split_sizes.is_none() && input_split_sizes.is_none()) {
    expect_count(a.out, a.in.count, what + ": output");
    a.block = equal_block(a.in, static_cast<std::size_t>(world), what);
    return a;
  }
  a.uneven = true;
  a.send_counts = split_counts(input_split_sizes, a.in, world, what + ": input_split_sizes");
  a.recv_counts = split_counts(output_split_sizes, a.out, world, what + ": output_split_sizes");
  a.send_displs = displacements(a.send_counts);
  a.recv_displs = displacements(a.recv_counts);
  return a;
}

}  // namespace

PYBIND11_MODULE(_rt, m) {
  m.doc() = "chorus runtime bindings (use the chorus package: import chorus)";
  static py::exception<rt::CommError> comm_error(m, "CommError", PyExc_RuntimeError);
  static py::exception<rt::TimeoutError> timeout_error(m, "TimeoutError", comm_error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rt::TimeoutError& e) {
      timeout_error(e.what());
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
  m.def("is_initialized", &rt::is_initialized);
  m.def("backends", &rt::backends);
  m.def("size", [](const std::string& b) { return rt::size(b); }, py::arg("backend") = "auto");
  m.def("rank", [](const std::string& b) { return rt::rank(b); }, py::arg("backend") = "auto");
  m.def("_mpirun_tcp_endpoint", &rt::mpi_agree_tcp_endpoint, py::call_guard<py::gil_scoped_release>(),
        "Under mpirun: 'host:port' free on rank 0, the same on every rank (chorus.distributed sets MASTER_ADDR/PORT)");
  m.def(
      "synchronize",
      [](const std::vector<std::string>& b) {
        py::gil_scoped_release release;
        rt::synchronize(b);
      },
      py::arg("backends") = std::vector<std::string>{});
  m.def(
      "split",
      [](const std::string& name, const std::string& backend, int color, int key) {
        py::gil_scoped_release release;
        rt::split(name, backend, color, key);
      },
      py::arg("name"), py::arg("backend"), py::arg("color"), py::arg("key") = 0);
  m.def(
      "new_group",
      [](const std::string& name, const std::vector<int>& ranks, const std::string& backend) {
        py::gil_scoped_release release;
        rt::new_group(name, ranks, backend);
      },
      py::arg("name"), py::arg("ranks"), py::arg("backend") = "auto");
  m.def("group_ranks", [](const std::string& name) { return rt::group_ranks(name); });
  m.def(
      "algorithm_names",
      [](const std::string& backend, const std::string& op) {
        return rt::algorithm_names(backend, rt::parse_op_kind(op, "algorithm_names: op"));
      },
      py::arg("backend"), py::arg("op") = "all_reduce",
      "the named algorithms of `op` (all_reduce, broadcast, all_gather, reduce_scatter, all_to_all_single) on `backend` "
      "besides 'default': all_reduce('mpi:ring', t) or broadcast('mpi:binomial', t) runs one");

  // Tensor fusion (rt/fusion/fusion.h). Collective to make and to close (every rank, same order).
  py::class_<PyFusion>(m, "Fusion")
      .def(py::init([](const std::vector<std::string>& backends, std::size_t buffer_bytes, std::int64_t cycle_us) {
             py::gil_scoped_release release;
             return std::make_unique<PyFusion>(backends, rt::FusionOptions{.buffer_bytes = buffer_bytes, .cycle_us = cycle_us});
           }),
           py::arg("backends"), py::arg("buffer_bytes") = std::size_t{1} << 20, py::arg("cycle_us") = 200,
           "Small all-reduces, broadcasts, reduces, all-gathers, gathers, scatters, reduce-scatters and all-to-alls fused "
           "into buffers of at most buffer_bytes (per rank), a cycle at most cycle_us after the oldest")
      .def(
          "all_reduce",
          [](PyFusion& f, const std::string& backend, const py::object& tensor, ReduceOp op) {
            auto t = tensor_of(tensor, "Fusion.all_reduce: tensor");
            return run(true, {t.owner}, [&](bool) { return f.get().all_reduce(backend, t.data, t.data, t.count, t.dtype, op); });
          },
          py::arg("backend"), py::arg("tensor"), py::arg("op") = ReduceOp::sum, "In place; always asynchronous: returns a Work")
      .def(
          "broadcast",
          [](PyFusion& f, const std::string& backend, const py::object& tensor, int src) {
            auto t = tensor_of(tensor, "Fusion.broadcast: tensor");
            return run(true, {t.owner}, [&](bool) { return f.get().broadcast(backend, t.data, t.count, t.dtype, src); });
          },
          py::arg("backend"), py::arg("tensor"), py::arg("src"), "In place; always asynchronous: returns a Work")
      .def(
          "all_gather_into_tensor",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input) {
            auto in = tensor_of(input, "Fusion.all_gather_into_tensor: input", false);
            auto out = tensor_of(output, "Fusion.all_gather_into_tensor: output");
            same_dtype(in, out, "Fusion.all_gather_into_tensor");
            expect_count(out, in.count * static_cast<std::size_t>(rt::size("auto")), "Fusion.all_gather_into_tensor: output");
            return run(true, {in.owner, out.owner}, [&](bool) { return f.get().all_gather(backend, in.data, out.data, in.count, in.dtype); });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), "Always asynchronous: returns a Work")
      .def(
          "reduce_scatter_tensor",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input, ReduceOp op) {
            auto in = tensor_of(input, "Fusion.reduce_scatter_tensor: input", false);
            auto out = tensor_of(output, "Fusion.reduce_scatter_tensor: output");
            same_dtype(in, out, "Fusion.reduce_scatter_tensor");
            expect_count(in, out.count * static_cast<std::size_t>(rt::size("auto")), "Fusion.reduce_scatter_tensor: input");
            return run(true, {in.owner, out.owner},
                       [&](bool) { return f.get().reduce_scatter(backend, in.data, out.data, out.count, out.dtype, op); });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("op") = ReduceOp::sum,
          "Always asynchronous: returns a Work")
      .def(
          "all_to_all_single",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input,
             const py::object& output_split_sizes, const py::object& input_split_sizes) {
            const auto a = all_to_all_args(output, input, output_split_sizes, input_split_sizes, rt::size("auto"),
                                           "Fusion.all_to_all_single");
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
          "reduce",
          [](PyFusion& f, const std::string& backend, const py::object& tensor, int dst, ReduceOp op) {
            auto t = tensor_of(tensor, "Fusion.reduce: tensor");
            return run(true, {t.owner}, [&](bool) { return f.get().reduce(backend, t.data, t.data, t.count, t.dtype, op, dst); });
          },
          py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("op") = ReduceOp::sum,
          "In place, the result on rank dst; always asynchronous: returns a Work")
      .def(
          "gather",
          [](PyFusion& f, const std::string& backend, const py::object& output, const py::object& input, int dst) {
            auto in = tensor_of(input, "Fusion.gather: input", false);
            const auto out = root_tensor(output, rt::rank("auto") == dst, in, true, "Fusion.gather: output");
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
            const auto in = root_tensor(input, rt::rank("auto") == src, out, false, "Fusion.scatter: input");
            return run(true, {out.owner, input}, [&](bool) {
              return f.get().scatter(backend, in ? in->data : nullptr, out.data, out.count, out.dtype, src);
            });
          },
          py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("src"),
          "input (world size x output, block j to rank j) on rank src, None elsewhere; always asynchronous")
      .def("flush", [](PyFusion& f) {
        py::gil_scoped_release release;
        f.get().flush();
      })
      .def("stats", [](PyFusion& f) {
        const auto s = f.get().stats();
        py::dict d;
        d["ops"] = s.ops;
        d["buffers"] = s.buffers;
        d["cycles"] = s.cycles;
        return d;
      })
      .def("close", &PyFusion::close, "Collective: flushes and stops (also on leaving a with block)")
      .def("__enter__", [](PyFusion& f) -> PyFusion& { return f; }, py::return_value_policy::reference)
      .def("__exit__", [](PyFusion& f, const py::object&, const py::object&, const py::object&) { f.close(); });

  m.def(
      "all_reduce",
      [](const std::string& backend, const py::object& tensor, ReduceOp op, bool async_op) {
        auto t = tensor_of(tensor, "all_reduce: tensor");
        return run(async_op, {t.owner}, [&](bool a) { return rt::all_reduce(backend, t.data, t.data, t.count, t.dtype, op, a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("op") = ReduceOp::sum, py::arg("async_op") = false,
      "In place on every rank, as torch.distributed.all_reduce");
  m.def(
      "broadcast",
      [](const std::string& backend, const py::object& tensor, int src, bool async_op) {
        auto t = tensor_of(tensor, "broadcast: tensor");
        return run(async_op, {t.owner}, [&](bool a) { return rt::broadcast(backend, t.data, t.count, t.dtype, src, a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("src"), py::arg("async_op") = false);
  m.def(
      "reduce",
      [](const std::string& backend, const py::object& tensor, int dst, ReduceOp op, bool async_op) {
        auto t = tensor_of(tensor, "reduce: tensor");
        return run(async_op, {t.owner}, [&](bool a) { return rt::reduce(backend, t.data, t.data, t.count, t.dtype, op, dst, a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("op") = ReduceOp::sum, py::arg("async_op") = false,
      "The result lands in `tensor` on rank dst");
  m.def(
      "all_gather_into_tensor",
      [](const std::string& backend, const py::object& output, const py::object& input, bool async_op) {
        auto in = tensor_of(input, "all_gather_into_tensor: input", false);
        auto out = tensor_of(output, "all_gather_into_tensor: output");
        same_dtype(in, out, "all_gather_into_tensor");
        expect_count(out, in.count * static_cast<std::size_t>(rt::size(backend)), "all_gather_into_tensor: output");
        return run(async_op, {in.owner, out.owner},
                   [&](bool a) { return rt::all_gather(backend, in.data, out.data, in.count, in.dtype, a); });
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("async_op") = false);
  m.def(
      "all_gather",
      [](const std::string& backend, const py::list& tensor_list, const py::object& tensor, bool async_op) {
        auto in = tensor_of(tensor, "all_gather: tensor", false);
        auto outs = tensors_of(tensor_list, "all_gather: tensor_list", true);
        if (outs.size() != static_cast<std::size_t>(rt::size(backend)))
          throw py::value_error(fmt::format("all_gather: tensor_list has {} tensors for {} ranks", outs.size(), rt::size(backend)));
        for (std::size_t i = 0; i < outs.size(); ++i) {
          same_dtype(in, outs[i], fmt::format("all_gather: tensor_list[{}]", i));
          expect_count(outs[i], in.count, fmt::format("all_gather: tensor_list[{}]", i));
        }
        // Torch's list form: gathered into one staging buffer, then copied out.
        auto staging = std::make_shared<Staging>();
        const std::size_t bytes = in.count * rt::dtype_bytes(in.dtype);
        staging->bytes.resize(bytes * outs.size());
        return run(async_op, {in.owner, tensor_list}, [&](bool a) { return rt::all_gather(backend, in.data, staging->bytes.data(), in.count, in.dtype, a); },
                   [outs, staging, bytes] {
                     for (std::size_t i = 0; i < outs.size(); ++i) std::memcpy(outs[i].data, staging->bytes.data() + i * bytes, bytes);
                   });
      },
      py::arg("backend"), py::arg("tensor_list"), py::arg("tensor"), py::arg("async_op") = false,
      "torch's list form (one staging copy); all_gather_into_tensor has none");
  // torch's gather and scatter: lists at the root only (None elsewhere), one staging copy there.
  m.def(
      "gather",
      [](const std::string& backend, const py::object& tensor, const py::object& gather_list, int dst, bool async_op) {
        auto in = tensor_of(tensor, "gather: tensor", false);
        const bool root = rt::rank(backend) == dst;
        const auto outs = root_list(gather_list, root, in, backend, "gather: gather_list", true);
        auto staging = std::make_shared<Staging>();
        const std::size_t bytes = in.count * rt::dtype_bytes(in.dtype);
        staging->bytes.resize(bytes * outs.size());
        return run(async_op, {in.owner, gather_list},
                   [&](bool a) { return rt::gather(backend, in.data, root ? staging->bytes.data() : nullptr, in.count, in.dtype, dst, a); },
                   [outs, staging, bytes] {
                     for (std::size_t i = 0; i < outs.size(); ++i) std::memcpy(outs[i].data, staging->bytes.data() + i * bytes, bytes);
                   });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("gather_list") = py::none(), py::arg("dst") = 0,
      py::arg("async_op") = false, "torch's gather: gather_list (one tensor per rank) on rank dst only");
  m.def(
      "scatter",
      [](const std::string& backend, const py::object& tensor, const py::object& scatter_list, int src, bool async_op) {
        auto out = tensor_of(tensor, "scatter: tensor");
        const bool root = rt::rank(backend) == src;
        const auto ins = root_list(scatter_list, root, out, backend, "scatter: scatter_list", false);
        auto staging = std::make_shared<Staging>();
        const std::size_t bytes = out.count * rt::dtype_bytes(out.dtype);
        staging->bytes.resize(bytes * ins.size());
        for (std::size_t i = 0; i < ins.size(); ++i) std::memcpy(staging->bytes.data() + i * bytes, ins[i].data, bytes);
        return run(async_op, {out.owner, scatter_list}, [&](bool a) {
          return rt::scatter(backend, root ? staging->bytes.data() : nullptr, out.data, out.count, out.dtype, src, a);
        }, [staging] {});
      },
      py::arg("backend"), py::arg("tensor"), py::arg("scatter_list") = py::none(), py::arg("src") = 0,
      py::arg("async_op") = false, "torch's scatter: scatter_list (one tensor per rank) on rank src only");
  m.def(
      "reduce_scatter_tensor",
      [](const std::string& backend, const py::object& output, const py::object& input, ReduceOp op, bool async_op) {
        auto in = tensor_of(input, "reduce_scatter_tensor: input", false);
        auto out = tensor_of(output, "reduce_scatter_tensor: output");
        same_dtype(in, out, "reduce_scatter_tensor");
        expect_count(in, out.count * static_cast<std::size_t>(rt::size(backend)), "reduce_scatter_tensor: input");
        return run(async_op, {in.owner, out.owner},
                   [&](bool a) { return rt::reduce_scatter(backend, in.data, out.data, out.count, out.dtype, op, a); });
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("op") = ReduceOp::sum, py::arg("async_op") = false);
  m.def(
      "all_to_all_single",
      [](const std::string& backend, const py::object& output, const py::object& input, const py::object& output_split_sizes,
         const py::object& input_split_sizes, bool async_op) {
        const auto a = all_to_all_args(output, input, output_split_sizes, input_split_sizes, rt::size(backend),
                                       "all_to_all_single");
        return run(async_op, {a.in.owner, a.out.owner}, [&](bool async) {
          return a.uneven ? rt::all_to_allv(backend, a.in.data, a.send_counts, a.send_displs, a.out.data, a.recv_counts,
                                            a.recv_displs, a.in.dtype, async)
                          : rt::all_to_all_single(backend, a.in.data, a.out.data, a.block, a.in.dtype, async);
        });
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("output_split_sizes") = py::none(),
      py::arg("input_split_sizes") = py::none(), py::arg("async_op") = false,
      "Split sizes count rows (the first dimension), as in torch");
  m.def(
      "all_to_all",
      [](const std::string& backend, const py::list& output_tensor_list, const py::list& input_tensor_list, bool async_op) {
        auto ins = tensors_of(input_tensor_list, "all_to_all: input_tensor_list", false);
        auto outs = tensors_of(output_tensor_list, "all_to_all: output_tensor_list", true);
        const auto world = static_cast<std::size_t>(rt::size(backend));
        if (ins.size() != world || outs.size() != world)
          throw py::value_error(fmt::format("all_to_all: {} inputs and {} outputs for {} ranks", ins.size(), outs.size(), world));
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
          return rt::all_to_all(backend, in_ptrs, in_counts, out_ptrs, out_counts, ins[0].dtype, a);
        });
      },
      py::arg("backend"), py::arg("output_tensor_list"), py::arg("input_tensor_list"), py::arg("async_op") = false,
      "torch's list form, no copies");
  m.def(
      "send",
      [](const std::string& backend, const py::object& tensor, int dst, bool async_op) {
        auto t = tensor_of(tensor, "send: tensor", false);
        return run(async_op, {t.owner}, [&](bool a) { return rt::send(backend, t.data, t.count, t.dtype, dst, a); });
      },
      py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("async_op") = false);
  m.def(
      "recv",
      [](const std::string& backend, const py::object& tensor, int src, bool async_op) {
        auto t = tensor_of(tensor, "recv: tensor");
        return run(async_op, {t.owner}, [&](bool a) { return rt::recv(backend, t.data, t.count, t.dtype, src, a); });
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
        for (int i = 0; i < iters; ++i) rt::all_reduce(backend, t.data, t.data, t.count, t.dtype, ReduceOp::sum, false);
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      },
      py::arg("backend"), py::arg("tensor"), py::arg("iters"));
  // Compressed operations (rt/compression/compressed.h): blocking, float32 / float64, under an
  // error bound given as text ("abs:1e-4": |error| <= 1e-4 on every element; "prec:16": 16 bit
  // planes per block of 4 values, relative); each returns what it sent: {raw_bytes, wire_bytes}.
  auto cz_module = m.def_submodule("compressed", "Error-bounded compressed collectives (zfp): bound='abs:1e-4' or 'prec:16'");
  cz_module.def(
      "all_reduce",
      [](const std::string& backend, const py::object& tensor, const std::string& bound, ReduceOp op) {
        return run_compressed(backend, compressed_all_reduce({"compressed.all_reduce", bound, rt::size(backend)}, tensor, op));
      },
      py::arg("backend"), py::arg("tensor"), py::arg("bound"), py::arg("op") = ReduceOp::sum,
      "In place; op SUM or AVG; |result - exact| <= an absolute bound on every element (plus the float additions' rounding)");
  cz_module.def(
      "all_gather_into_tensor",
      [](const std::string& backend, const py::object& output, const py::object& input, const std::string& bound) {
        return run_compressed(
            backend, compressed_all_gather({"compressed.all_gather_into_tensor", bound, rt::size(backend)}, output, input));
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("bound"));
  cz_module.def(
      "all_to_all_single",
      [](const std::string& backend, const py::object& output, const py::object& input, const std::string& bound) {
        return run_compressed(
            backend, compressed_all_to_all({"compressed.all_to_all_single", bound, rt::size(backend)}, output, input));
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("bound"), "Equal blocks, block j to rank j");
  cz_module.def(
      "send",
      [](const std::string& backend, const py::object& tensor, int dst, const std::string& bound) {
        return run_compressed(backend, compressed_send({"compressed.send", bound, rt::size(backend)}, tensor, dst));
      },
      py::arg("backend"), py::arg("tensor"), py::arg("dst"), py::arg("bound"));
  cz_module.def(
      "recv",
      [](const std::string& backend, const py::object& tensor, int src, const std::string& bound) {
        run_compressed(backend, compressed_recv({"compressed.recv", bound, rt::size(backend)}, tensor, src));
      },
      py::arg("backend"), py::arg("tensor"), py::arg("src"), py::arg("bound"), "The same count, dtype and bound as the send");
  // The same collectives queued to a worker on a group of their own (rt/compression/compressor.h):
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
            return c.queue("Compressor.all_reduce",
                           compressed_all_reduce({"Compressor.all_reduce", bound, c.world()}, tensor, op), {tensor});
          },
          py::arg("tensor"), py::arg("bound"), py::arg("op") = ReduceOp::sum, "In place; op SUM or AVG; returns a Work")
      .def(
          "all_gather_into_tensor",
          [](PyCompressor& c, const py::object& output, const py::object& input, const std::string& bound) {
            return c.queue("Compressor.all_gather_into_tensor",
                           compressed_all_gather({"Compressor.all_gather_into_tensor", bound, c.world()}, output, input),
                           {output, input});
          },
          py::arg("output"), py::arg("input"), py::arg("bound"), "Returns a Work")
      .def(
          "all_to_all_single",
          [](PyCompressor& c, const py::object& output, const py::object& input, const std::string& bound) {
            return c.queue("Compressor.all_to_all_single",
                           compressed_all_to_all({"Compressor.all_to_all_single", bound, c.world()}, output, input),
                           {output, input});
          },
          py::arg("output"), py::arg("input"), py::arg("bound"), "Equal blocks; returns a Work")
      .def(
          "send",
          [](PyCompressor& c, const py::object& tensor, int dst, const std::string& bound) {
            return c.queue("Compressor.send", compressed_send({"Compressor.send", bound, c.world()}, tensor, dst), {tensor},
                           cz::Compressor::LaneKind::send);
          },
          py::arg("tensor"), py::arg("dst"), py::arg("bound"), "On the send worker, in call order; returns a Work")
      .def(
          "recv",
          [](PyCompressor& c, const py::object& tensor, int src, const std::string& bound) {
            return c.queue("Compressor.recv", compressed_recv({"Compressor.recv", bound, c.world()}, tensor, src), {tensor},
                           cz::Compressor::LaneKind::recv);
          },
          py::arg("tensor"), py::arg("src"), py::arg("bound"),
          "On the receive worker, in call order; the same count, dtype and bound as the send; returns a Work")
      .def("stats", [](PyCompressor& c) { return stats_dict(c.get().stats()); }, "What every call so far sent: {raw_bytes, wire_bytes}")
      .def("close", &PyCompressor::close, "Collective: waits for the queued calls and stops (also on leaving a with block)")
      .def("__enter__", [](PyCompressor& c) -> PyCompressor& { return c; }, py::return_value_policy::reference)
      .def("__exit__", [](PyCompressor& c, const py::object&, const py::object&, const py::object&) { c.close(); });
  m.def(
      "barrier", [](const std::string& backend, bool async_op) { return run(async_op, {}, [&](bool a) { return rt::barrier(backend, a); }); },
      py::arg("backend") = "auto", py::arg("async_op") = false);
}
