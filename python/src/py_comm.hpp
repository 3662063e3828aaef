// The Python handle of a dist::Communicator (dist_bindings.cpp; used by solve_bindings.cpp's
// cg_ranks). `owner` is the Python object the communicator borrows (an mpi4py communicator whose
// MPI_Comm it uses), kept alive as long as the handle, and by every operator made on it.
#pragma once

#include <nanobind/nanobind.h>

#include "fieldft/dist.hpp"

namespace fieldft::python {

struct PyComm {
  dist::CommPtr comm;
  nanobind::object owner;
};

}  // namespace fieldft::python
