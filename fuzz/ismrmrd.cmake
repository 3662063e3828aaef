# The ISMRMRD reader's libFuzzer target, included by the fuzz project (fuzz/CMakeLists.txt, built
# with clang, which defines fieldft_add_fuzzer and the sanitized library fieldft_fuzz_io) when
# FIELDFT_ISMRMRD is on.
# Builds ismrmrd_fuzz and ismrmrd_seeds (fuzz/ismrmrd_seeds.cpp: writes the seed corpus into the
# directory given as its argument) when Debian's libismrmrd-dev is installed.
enable_language(C)  # ISMRMRD's package config runs CMake's FindHDF5, which test-compiles C
find_package(ISMRMRD CONFIG QUIET)
if(NOT ISMRMRD_FOUND)
  message(STATUS "fieldft fuzz: no libismrmrd-dev, ismrmrd_fuzz skipped")
  return()
endif()
set(_root ${CMAKE_CURRENT_LIST_DIR}/..)
# The reader includes fieldft/config.hpp, which the main build generates: this build's own.
set(_cfg ${CMAKE_CURRENT_BINARY_DIR}/ismrmrd_include)
file(WRITE ${_cfg}/fieldft/config.hpp "#pragma once\n#define FIELDFT_HAVE_ISMRMRD 1\n")
# MAX_LEN 65536: the seeds (HDF5 files of a few acquisitions) are 10-30 KB.
fieldft_add_fuzzer(ismrmrd MAX_LEN 65536
  SOURCES ${_root}/src/io/ismrmrd.cpp ${_root}/src/io/ismrmrd_read.cpp ${_root}/src/io/ismrmrd_maps.cpp
          ${_root}/src/io/ismrmrd_write.cpp ${_root}/src/io/hdf5_util.cpp ${_root}/src/io/hdf5_guard.cpp ${_root}/src/io/hdf5_headers.cpp
          ${_root}/src/core/names.cpp
  LIBRARIES ISMRMRD::ISMRMRD)
target_include_directories(ismrmrd_fuzz BEFORE PRIVATE ${_cfg})
target_include_directories(ismrmrd_seeds BEFORE PRIVATE ${_cfg})
