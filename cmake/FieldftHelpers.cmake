# Adds every direct subfolder of the current source folder that has a CMakeLists.txt, so that
# tests/, apps/ and bench/ grow by adding folders, without editing a central list.
function(fieldft_add_subdirectories)
  file(GLOB _entries LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} *)
  list(SORT _entries)
  foreach(d ${_entries})
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${d} AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${d}/CMakeLists.txt)
      add_subdirectory(${d})
    endif()
  endforeach()
endfunction()

# Makes target CLI11::CLI11 available in the calling directory: CLI11's CMake package when
# installed, else an interface target on the header alone (CLI11 is header-only, and some
# distributions ship the header without the CMake package).
function(fieldft_find_cli11)
  find_package(CLI11 CONFIG QUIET)
  if(NOT TARGET CLI11::CLI11)
    find_path(FIELDFT_CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE ${FIELDFT_CLI11_INCLUDE_DIR})
  endif()
endfunction()

# Explicit instantiation in small translation units, one per precision and dimension: generates
# <stem>_<T>_<D>d.<ext> from `template` (which uses @T@ and @D@) and adds it to `target`.
function(fieldft_add_instantiations target template stem ext)
  foreach(T float double)
    foreach(D 1 2 3)
      set(_out ${CMAKE_CURRENT_BINARY_DIR}/${stem}_${T}_${D}d.${ext})
      configure_file(${template} ${_out} @ONLY)
      target_sources(${target} PRIVATE ${_out})
    endforeach()
  endforeach()
endfunction()

# One layer of the library (docs/architecture.md, "Layers"): an OBJECT library fieldft_<name>
# whose objects go into `fieldft`. Its sources see the public headers (include/) and, of src/,
# only the folders named in SEES (its own and the layers below it): the include root
# <build>/layers/<name>/ holds a symbolic link per such folder and nothing else, so that an
# upward `#include "mri/..."` from src/core does not compile. tools/check_layers.py checks the
# same table, public headers included.
#   fieldft_layer(<name> SEES <src folder>... [SOURCES <file>...])
# More sources: target_sources(fieldft_<name> PRIVATE ...).
function(fieldft_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SEES;SOURCES")
  set(_target fieldft_${name})
  add_library(${_target} OBJECT ${arg_SOURCES})
  target_link_libraries(${_target} PRIVATE fieldft_layer_settings)
  set(_root ${PROJECT_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${_root})
  file(MAKE_DIRECTORY ${_root})
  foreach(d ${arg_SEES})
    if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/src/${d})
      message(FATAL_ERROR "fieldft_layer(${name}): src/${d} is not a folder")
    endif()
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${d} ${_root}/${d} SYMBOLIC)
  endforeach()
  target_include_directories(${_target} PRIVATE ${_root})
  set_target_properties(${_target} PROPERTIES FIELDFT_LAYER_ROOT ${_root})
  target_sources(fieldft PRIVATE $<TARGET_OBJECTS:${_target}>)
endfunction()
