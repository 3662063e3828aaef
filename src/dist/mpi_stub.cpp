// Built without MPI (FIELDFT_MPI off or no MPI found): mpi_world says so.
#include "fieldft/dist.hpp"

namespace fieldft::dist {

bool have_mpi() noexcept { return false; }

CommPtr mpi_world() {
  throw Error(ErrorCode::kBackendUnavailable,
              "dist::mpi_world: fieldft was built without MPI (configure with FIELDFT_MPI=ON and "
              "an MPI installed, e.g. Debian's libopenmpi-dev)");
}

CommPtr mpi_comm(std::intptr_t /*handle*/) {
  throw Error(ErrorCode::kBackendUnavailable,
              "dist::mpi_comm: fieldft was built without MPI (configure with FIELDFT_MPI=ON and "
              "an MPI installed, e.g. Debian's libopenmpi-dev)");
}

std::string mpi_library_version() { return {}; }

}  // namespace fieldft::dist
