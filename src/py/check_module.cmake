# Run after linking a Python extension module (cmake -DMODULE=<file> -DINIT=PyInit_<name>
# -DNM=<nm> -P check_module.cmake): the build fails when the module does not export its init
# function. A toolchain that drops the module's code (GCC's LTO objects linked by lld gave a
# 3.6 KB module with no code, which Python then refused with "dynamic module does not define
# module export function") is caught where it happens, in every build type.
execute_process(COMMAND ${NM} -D --defined-only ${MODULE} OUTPUT_VARIABLE _symbols RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${NM} could not read ${MODULE}")
endif()
string(FIND "${_symbols}" " ${INIT}\n" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "${MODULE} does not export ${INIT}: the linker dropped the module's code "
                      "(docs/development.md, \"Linker and LTO\")")
endif()
