// The GIL rule of every binding: library calls run with the GIL released.
#pragma once

#include <nanobind/nanobind.h>

#include <exception>
#include <utility>

namespace fieldft::python {

// Runs f with the GIL released. An exception thrown by f is carried over the re-acquisition of
// the GIL and rethrown with the GIL held, so that translation into a Python exception always
// starts from a thread that holds the interpreter (and no exception unwinds through the guard).
template <class F>
void without_gil(F&& f) {
  std::exception_ptr error;
  {
    nanobind::gil_scoped_release release;
    try {
      std::forward<F>(f)();
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace fieldft::python
