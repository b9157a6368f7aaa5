# Target helpers: warning flags in one place, and one library target per module.
function(schedforge_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()

# schedforge_add_module(NAME SOURCES ... [PUBLIC libs...] [PRIVATE libs...])
# One library target per module: schedforge_NAME, aliased schedforge::NAME, include root = repo.
function(schedforge_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(schedforge_${name} ${ARG_SOURCES})
  add_library(schedforge::${name} ALIAS schedforge_${name})
  target_include_directories(schedforge_${name} PUBLIC "${PROJECT_SOURCE_DIR}")
  target_link_libraries(schedforge_${name} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  schedforge_set_warnings(schedforge_${name})
endfunction()
