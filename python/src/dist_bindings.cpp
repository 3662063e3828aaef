// fieldft._core's scale-out layer (include/fieldft/dist.hpp) for python/fieldft/dist.py:
// communicators (single, MPI from an mpi4py handle, NCCL over the devices of this process or over
// MPI ranks), split and rank_sum. The solve over several ranks of one process is cg_ranks
// (solve_bindings.cpp). Same rules as op_bindings.cpp: the GIL is released around library calls.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/dist.hpp"
#include "py_comm.hpp"
#include "py_operator.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {

const char* engine_name(dist::Engine e) {
  switch (e) {
    case dist::Engine::kMpi: return "mpi";
    case dist::Engine::kNccl: return "nccl";
    default: return "single";
  }
}

// rank_sum(part, comm); the result keeps part's stream owners and comm's owner (an mpi4py
// communicator) alive.
template <class T>
PyOperator<T> rank_sum(const PyOperator<T>& part, const PyComm& comm) {
  op::OperatorPtr<T> result;
  without_gil([&] {
    std::lock_guard lock(call_mutex());
    result = dist::rank_sum<T>(part.ptr(), comm.comm);
  });
  std::vector<nb::object> owners = part.owners();
  if (comm.owner.is_valid() && !comm.owner.is_none()) owners.push_back(comm.owner);
  return PyOperator<T>(std::move(result), std::move(owners));
}

}  // namespace

void bind_dist(nb::module_& m) {
  nb::class_<PyComm>(m, "Communicator")
      .def_prop_ro("rank", [](const PyComm& c) { return c.comm->rank(); })
      .def_prop_ro("size", [](const PyComm& c) { return c.comm->size(); })
      .def_prop_ro("engine", [](const PyComm& c) { return std::string(engine_name(c.comm->engine())); })
      .def("describe", [](const PyComm& c) { return c.comm->describe(); })
      .def("__repr__", [](const PyComm& c) { return "<fieldft.dist.Communicator " + c.comm->describe() + ">"; })
      // Host, blocking, collective: the maximum of `value` over the ranks.
      .def("agree_max",
           [](PyComm& c, int value) {
             int out = 0;
             without_gil([&] { out = c.comm->agree_max(value); });
             return out;
           },
           "value"_a);
  m.def("dist_single", [] { return PyComm{dist::single(), nb::none()}; });
  m.def("dist_have_mpi", &dist::have_mpi);
  m.def("dist_have_nccl", &dist::have_nccl);
  m.def("dist_mpi_library_version", &dist::mpi_library_version);
  // handle: the MPI_Comm's value (mpi4py: MPI._handleof(comm)); owner: the mpi4py communicator.
  m.def("dist_mpi_comm",
        [](std::intptr_t handle, nb::object owner) {
          dist::CommPtr c;
          without_gil([&] { c = dist::mpi_comm(handle); });
          return PyComm{std::move(c), std::move(owner)};
        },
        "handle"_a, "owner"_a.none());
  m.def("dist_nccl_devices",
        [](const std::vector<int>& devices) {
          std::vector<dist::CommPtr> cs;
          without_gil([&] { cs = dist::nccl_devices(devices); });
          std::vector<PyComm> out;
          for (auto& c : cs) out.push_back(PyComm{std::move(c), nb::none()});
          return out;
        },
        "devices"_a);
  m.def("dist_nccl_over",
        [](const PyComm& host, int device) {
          dist::CommPtr c;
          without_gil([&] { c = dist::nccl_over(host.comm, device); });
          return PyComm{std::move(c), host.owner};
        },
        "host"_a, "device"_a);
  m.def("dist_split",
        [](std::int64_t count, int parts, int index) {
          const dist::Share s = dist::split(count, parts, index);
          return std::make_pair(s.begin, s.end);
        },
        "count"_a, "parts"_a, "index"_a);
  m.def("dist_rank_sum_f", &rank_sum<float>, "part"_a, "comm"_a);
  m.def("dist_rank_sum_d", &rank_sum<double>, "part"_a, "comm"_a);
}

}  // namespace fieldft::python
