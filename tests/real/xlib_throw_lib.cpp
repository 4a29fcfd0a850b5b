// The library half of tests/real/xlib_throw.cpp: C++ exceptions thrown in,
// through and out of a shared library of the program's own (instrumented by
// default: it is not in a system directory).
#include <stdexcept>

__attribute__((noipa)) void lib_throw(int i) {
  if (i >= 0) throw std::runtime_error("lib");
}

__attribute__((noipa)) int lib_catch(int (*callback)(int), int i) {
  try {
    return callback(i);
  } catch (int v) {
    return -v;
  }
}

__attribute__((noipa)) void lib_rethrow(int i) {
  try {
    lib_throw(i);
  } catch (...) {
    throw;
  }
}
