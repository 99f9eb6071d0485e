// libchorus_py_runtime.so: the runtime (chorus_rt, whole) as one shared library for the Python
// modules chorus._rt and chorus._c10d, so that a process holds one runtime (src/py/CMakeLists.txt).
// This file only gives the library a source of its own.
namespace chorus::py_runtime {
int library_marker = 0;
}
