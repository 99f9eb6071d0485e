#include "py/py_tensor.h"

#include <cstdint>

#include <fmt/format.h>

#include "py/tensor_adapt.h"
#include "rt/runtime_instance.h"

namespace chorus::py_rt {

rt::Runtime& runtime(std::string_view what) { return rt::default_runtime(what); }

using rt::DType;

namespace {

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
  throw py::type_error(fmt::format(
      "{}: element type '{}' ({} bytes) is not one chorus reduces: float16, bfloat16 (torch), float32, float64, int8, "
      "uint8, int32, int64",
      what, f, b.itemsize));
}

// torch's split sizes (None: equal blocks) as element counts per rank.
rt::Counts split_counts(const py::object& sizes, const Tensor& t, int world, const std::string& what) {
  if (sizes.is_none())
    return rt::Counts(static_cast<std::size_t>(world), equal_block(t, static_cast<std::size_t>(world), what));
  // Each size a Python int of at most 63 bits (pybind11's cast would say only "Unable to cast").
  std::vector<std::int64_t> list;
  if (!py::isinstance<py::sequence>(sizes) || py::isinstance<py::str>(sizes))
    throw py::value_error(fmt::format("{}: expected a list of integers, got {}", what,
                                      py::str(py::type::of(sizes).attr("__name__")).cast<std::string>()));
  for (const py::handle item : sizes.cast<py::sequence>()) {
    int overflow = 0;
    const long long v = py::isinstance<py::int_>(item) ? PyLong_AsLongLongAndOverflow(item.ptr(), &overflow) : 0;
    if (!py::isinstance<py::int_>(item) || overflow != 0)
      throw py::value_error(fmt::format("{}: split size [{}] = {} is not an integer of at most 63 bits", what,
                                        list.size(), py::repr(item).cast<std::string>()));
    list.push_back(v);
  }
  try {
    return tensor_adapt::split_rows(list, static_cast<std::size_t>(world), t.rows,
                                    tensor_adapt::row_units(t.count, t.rows))
        .counts;
  } catch (const tensor_adapt::SplitError& e) {
    using Kind = tensor_adapt::SplitError::Kind;
    switch (e.kind) {
      case Kind::kLength:
        throw py::value_error(fmt::format("{}: {} split sizes for {} ranks", what, list.size(), world));
      case Kind::kNegative:
        throw py::value_error(fmt::format("{}: split size {} is negative", what, e.value));
      case Kind::kTooLarge:
        throw py::value_error(
            fmt::format("{}: split size [{}] = {} is more than the tensor's {} rows", what, e.index, e.value, t.rows));
      case Kind::kSum:
        throw py::value_error(
            fmt::format("{}: split sizes add up to {}, the tensor has {} rows", what, e.value, t.rows));
    }
    throw;
  }
}

}  // namespace

// numpy refuses a strided array itself. The view is released at once; the reference in `owner`
// keeps the memory (an array with references cannot be resized).
Tensor tensor_of(const py::object& obj, std::string_view what, bool writable) {
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
  if (PyObject_GetBuffer(view.ptr(), &b,
                         PyBUF_FORMAT | PyBUF_ND | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) != 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer(view.ptr(), &b, PyBUF_FORMAT | PyBUF_STRIDES) == 0) {
      const bool read_only = writable && b.readonly;
      PyBuffer_Release(&b);
      if (read_only)
        throw py::value_error(fmt::format("{}: the tensor is read-only, and the operation writes it", what));
      throw py::value_error(
          fmt::format("{}: the tensor is not contiguous (call .contiguous() or numpy.ascontiguousarray)", what));
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
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(tensor_of(list[i], fmt::format("{}[{}]", what, i), writable));
  return out;
}

void same_dtype(const Tensor& a, const Tensor& b, std::string_view what) {
  if (a.dtype != b.dtype)
    throw py::type_error(
        fmt::format("{}: element types differ ({} and {})", what, rt::to_string(a.dtype), rt::to_string(b.dtype)));
}

void expect_count(const Tensor& t, std::size_t count, std::string_view what) {
  if (t.count != count) throw py::value_error(fmt::format("{}: has {} elements, expected {}", what, t.count, count));
}

std::vector<Tensor> root_list(const py::object& list, bool root, const Tensor& like, const std::string& backend,
                              const std::string& what, bool writable) {
  if (!root) {
    if (!list.is_none()) throw py::value_error(fmt::format("{}: give it on the root rank only (None here)", what));
    return {};
  }
  if (list.is_none()) throw py::value_error(fmt::format("{}: required on the root rank", what));
  auto tensors = tensors_of(list.cast<py::sequence>(), what, writable);
  if (tensors.size() != static_cast<std::size_t>(runtime("size").size(backend)))
    throw py::value_error(
        fmt::format("{}: {} tensors for {} ranks", what, tensors.size(), runtime("size").size(backend)));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    same_dtype(like, tensors[i], fmt::format("{}[{}]", what, i));
    expect_count(tensors[i], like.count, fmt::format("{}[{}]", what, i));
  }
  return tensors;
}

std::optional<Tensor> root_tensor(const py::object& obj, bool root, const Tensor& like, bool writable,
                                  const std::string& what) {
  if (root == obj.is_none())
    throw py::value_error(
        fmt::format("{}: a tensor of world size x {} elements on the root rank, None elsewhere", what, like.count));
  if (!root) return std::nullopt;
  auto t = tensor_of(obj, what, writable);
  same_dtype(like, t, what);
  expect_count(t, like.count * static_cast<std::size_t>(runtime("size").size("auto")), what);
  return t;
}

std::size_t equal_block(const Tensor& t, std::size_t world, std::string_view what) {
  if (const auto block = tensor_adapt::equal_block(t.count, world)) return *block;
  throw py::value_error(fmt::format("{}: {} elements do not split evenly over {} ranks", what, t.count, world));
}

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
  a.send_displs = tensor_adapt::displacements(a.send_counts);
  a.recv_displs = tensor_adapt::displacements(a.recv_counts);
  return a;
}

PyWork::~PyWork() {
  if (!waited_) {
    py::gil_scoped_release release;
    try {
      work_.wait();
    } catch (...) {  // the error was the caller's to collect with wait(); the buffers stay valid until here
    }
  }
}

void PyWork::wait() {
  if (waited_) return;
  {
    py::gil_scoped_release release;
    work_.wait();
  }
  waited_ = true;
  if (finish_) finish_();
}

std::shared_ptr<Staging> staging_buffer(std::size_t bytes) {
  // The runtime's pool (Runtime::staging_pool): a buffer outliving its runtime is freed, not kept.
  return std::make_shared<Staging>(runtime("staging").staging_pool().take(bytes));
}

}  // namespace chorus::py_rt
