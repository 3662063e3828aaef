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
