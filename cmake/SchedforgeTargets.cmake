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

# schedforge_use_fast_malloc(TARGET): links jemalloc into a program, when found (SCHEDFORGE_FAST_MALLOC).
# Never into the plugin: it is loaded into other programs, whose malloc it must not replace.
function(schedforge_use_fast_malloc target)
  if (SCHEDFORGE_FAST_MALLOC)
    # Linked even though nothing names it: it replaces malloc and free by being loaded first.
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" "${SCHEDFORGE_FAST_MALLOC}"
                          "-Wl,--pop-state")
    target_compile_definitions(${target} PRIVATE SCHEDFORGE_FAST_MALLOC=1)
  endif ()
endfunction()

# schedforge_add_program(NAME SOURCES... LIBS ...): a command-line program or benchmark.
function(schedforge_add_program name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}")
  schedforge_set_warnings(${name})
  schedforge_use_fast_malloc(${name})
endfunction()
