# Finds FFTW3 in double and single precision, with their OpenMP thread libraries.
# Defines FFTW3::fftw3, FFTW3::fftw3f, FFTW3::fftw3_omp, FFTW3::fftw3f_omp.
find_path(FFTW3_INCLUDE_DIR fftw3.h)
set(_fftw3_vars FFTW3_INCLUDE_DIR)
foreach(lib fftw3 fftw3f fftw3_omp fftw3f_omp)
  find_library(FFTW3_${lib}_LIBRARY NAMES ${lib})
  list(APPEND _fftw3_vars FFTW3_${lib}_LIBRARY)
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3 REQUIRED_VARS ${_fftw3_vars})
if(FFTW3_FOUND)
  foreach(lib fftw3 fftw3f fftw3_omp fftw3f_omp)
    if(NOT TARGET FFTW3::${lib})
      add_library(FFTW3::${lib} UNKNOWN IMPORTED)
      set_target_properties(FFTW3::${lib} PROPERTIES
        IMPORTED_LOCATION "${FFTW3_${lib}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}")
    endif()
  endforeach()
endif()
mark_as_advanced(${_fftw3_vars})
