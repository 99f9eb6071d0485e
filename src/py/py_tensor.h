#pragma once
// chorus._rt's tensors: Python objects (the buffer protocol, torch's .numpy()) as the runtime's
// pointers, element types and counts, checked with the GIL held; the Work of an asynchronous
// call; and run(), which calls the runtime without the GIL. Shared by the binding files
// (bind_runtime.cpp, bind_fusion.cpp, bind_compression.cpp).
#include <pybind11/pybind11.h>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rt/buffer_pool.h"
#include "rt/runtime.h"
#include "rt/types.h"
#include "rt/work.h"

namespace chorus::py_rt {

namespace py = pybind11;

// The process's default runtime (chorus.init's), which every function of the module runs on;
// InputError naming `what` before init().
rt::Runtime& runtime(std::string_view what);

// A contiguous tensor's memory, element type and count, rows (its first dimension), and the
// object that owns the memory (kept referenced while an operation uses it).
struct Tensor {
  py::object owner;
  void* data = nullptr;
  std::size_t count = 0;
  std::size_t rows = 1;
  rt::DType dtype = rt::DType::f32;
};

// The hot path of every call: one PyObject_GetBuffer asking the exporter for a C-contiguous
// view, no allocation. `what` names the argument in errors.
Tensor tensor_of(const py::object& obj, std::string_view what, bool writable = true);
std::vector<Tensor> tensors_of(const py::sequence& list, std::string_view what, bool writable);

void same_dtype(const Tensor& a, const Tensor& b, std::string_view what);
void expect_count(const Tensor& t, std::size_t count, std::string_view what);

// gather's and scatter's list: one tensor per rank of `like`'s dtype and size at the root, None
// elsewhere (as torch.distributed requires).
std::vector<Tensor> root_list(const py::object& list, bool root, const Tensor& like, const std::string& backend,
                              const std::string& what, bool writable);

// A fused gather's output or scatter's input: world size x `like` at the root, None elsewhere.
std::optional<Tensor> root_tensor(const py::object& obj, bool root, const Tensor& like, bool writable,
                                  const std::string& what);

// Elements per block of an all-to-all of equal blocks over `world` ranks.
std::size_t equal_block(const Tensor& t, std::size_t world, std::string_view what);

// all_to_all_single's arguments, as chorus.all_to_all_single and Fusion.all_to_all_single take
// them: equal blocks (no split sizes), or split sizes counting rows as in torch.
struct AllToAllArgs {
  Tensor in, out;
  bool uneven = false;
  std::size_t block = 0;                                          // equal blocks: elements per rank
  rt::Counts send_counts, send_displs, recv_counts, recv_displs;  // uneven: elements per rank
};
AllToAllArgs all_to_all_args(const py::object& output, const py::object& input, const py::object& output_split_sizes,
                             const py::object& input_split_sizes, int world, const std::string& what);

// A staging buffer for torch's list forms, from the module's rt::BufferPool (reused across
// operations: fresh pages cost more than the copies); the Work keeps it alive, and it goes back
// to the pool when the last holder lets go.
using Staging = rt::BufferPool::Buffer;
std::shared_ptr<Staging> staging_buffer(std::size_t bytes);

// An operation in flight: the runtime's handle, the Python objects whose memory it uses, and what
// to do once it ends (copy a staging buffer into torch's output list).
class PyWork {
 public:
  PyWork(rt::Work w, std::vector<py::object> keep, std::function<void()> finish)
      : work_(std::move(w)), keep_(std::move(keep)), finish_(std::move(finish)) {}
  ~PyWork();
  void wait();
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
py::object run(bool async_op, std::initializer_list<py::object> keep, const Call& call,
               std::function<void()> finish = nullptr) {
  rt::Work w;
  {
    py::gil_scoped_release release;
    w = call(async_op);
  }
  if (async_op)
    return py::cast(std::make_shared<PyWork>(std::move(w), std::vector<py::object>(keep), std::move(finish)));
  if (finish) finish();
  return py::none();
}

// The module's parts, one file each, called by PYBIND11_MODULE (rt_module.cpp) in this order.
void bind_runtime(py::module_& m);      // bind_runtime.cpp: init, groups, the operations
void bind_fusion(py::module_& m);       // bind_fusion.cpp: chorus.Fusion
void bind_compression(py::module_& m);  // bind_compression.cpp: chorus.compressed, its Compressor

}  // namespace chorus::py_rt
