# cmake -P script behind the test consumer.find_package (see CMakeLists.txt beside it).
# Inputs: FIELDFT_BUILD_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, BUILD_CONFIG, CONSUMER_GENERATOR,
# CONSUMER_CXX_COMPILER, CUDA_TOOLKIT_ROOT (may be empty).
cmake_minimum_required(VERSION 3.25)

foreach(v FIELDFT_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CONSUMER_GENERATOR CONSUMER_CXX_COMPILER)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: ${v} must be set (-D${v}=...)")
  endif()
endforeach()
if(NOT BUILD_CONFIG)
  set(BUILD_CONFIG Release)
endif()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)
# Start from nothing: a stale prefix could hide a file that the install no longer provides.
file(REMOVE_RECURSE ${WORK_DIR})

function(run_step what)
  message(STATUS "consumer: ${what}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (exit code ${rc})")
  endif()
endfunction()

run_step("install" ${CMAKE_COMMAND} --install ${FIELDFT_BUILD_DIR} --config ${BUILD_CONFIG}
         --prefix ${prefix})

foreach(f include/fieldft/fieldft.hpp include/fieldft/config.hpp include/fieldft/fieldft.h
          include/fieldft-finufft/finufft.h include/fieldft-finufft/finufft_opts.h
          include/fieldft-finufft/finufft_errors.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "consumer: ${prefix}/${f} is missing after the install")
  endif()
endforeach()

# CMAKE_FIND_USE_PACKAGE_REGISTRY=OFF and the prefix as the only hint: the package must be
# found in the install tree, never in the build tree.
set(configure_args
  -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build} -G ${CONSUMER_GENERATOR}
  -DCMAKE_BUILD_TYPE=${BUILD_CONFIG}
  -DCMAKE_CXX_COMPILER=${CONSUMER_CXX_COMPILER}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DEXPECTED_PREFIX=${prefix})
if(CUDA_TOOLKIT_ROOT)
  list(APPEND configure_args -DCUDAToolkit_ROOT=${CUDA_TOOLKIT_ROOT})
endif()
run_step("configure" ${CMAKE_COMMAND} ${configure_args})
run_step("build" ${CMAKE_COMMAND} --build ${consumer_build} --config ${BUILD_CONFIG})

foreach(exe fieldft_consumer fieldft_consumer_c fieldft_consumer_finufft)
  find_program(consumer_exe_${exe} ${exe} PATHS ${consumer_build} ${consumer_build}/${BUILD_CONFIG}
               NO_DEFAULT_PATH REQUIRED)
  run_step("run ${exe}" ${consumer_exe_${exe}})
endforeach()
message(STATUS "consumer: installed package works")
