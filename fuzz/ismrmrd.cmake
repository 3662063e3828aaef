# The ISMRMRD reader's libFuzzer target and its seed writer, for a fuzz build of fieldft: the
# including project has built target `fieldft` with clang and -fsanitize=address,undefined (or
# adds them here), with FIELDFT_HAVE_ISMRMRD on. One line hooks it in: include(fuzz/ismrmrd.cmake).
#   fieldft_fuzz_ismrmrd        the fuzzer (fuzz/ismrmrd_fuzz.cpp)
#   fieldft_fuzz_ismrmrd_seeds  writes the seed corpus: fieldft_fuzz_ismrmrd_seeds DIR
if(FIELDFT_HAVE_ISMRMRD)
  set(_fieldft_fuzz_san -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  add_executable(fieldft_fuzz_ismrmrd ${CMAKE_CURRENT_LIST_DIR}/ismrmrd_fuzz.cpp)
  add_executable(fieldft_fuzz_ismrmrd_seeds ${CMAKE_CURRENT_LIST_DIR}/ismrmrd_seeds.cpp)
  foreach(t fieldft_fuzz_ismrmrd fieldft_fuzz_ismrmrd_seeds)
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${t} PRIVATE fieldft ISMRMRD::ISMRMRD)
    target_compile_options(${t} PRIVATE ${_fieldft_fuzz_san})
    target_link_options(${t} PRIVATE ${_fieldft_fuzz_san})
  endforeach()
  target_compile_options(fieldft_fuzz_ismrmrd PRIVATE -fsanitize=fuzzer)
  target_link_options(fieldft_fuzz_ismrmrd PRIVATE -fsanitize=fuzzer)
else()
  message(STATUS "fieldft: ISMRMRD fuzz target skipped (no ISMRMRD)")
endif()
