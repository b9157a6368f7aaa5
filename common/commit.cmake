# Writes OUT: a header defining SCHEDFORGE_COMMIT, the commit checked out in SOURCE_DIR, with
# "-dirty" when tracked files differ from it ("unknown" outside git). common/CMakeLists.txt runs
# it at every build, so files record the commit their producer was built from; OUT is rewritten
# only when its text changes, so nothing recompiles needlessly.
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if (NOT rc EQUAL 0 OR NOT commit)
  set(commit "unknown")
else ()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty
                  ERROR_QUIET)
  if (NOT dirty EQUAL 0)
    string(APPEND commit "-dirty")
  endif ()
endif ()
set(text "#define SCHEDFORGE_COMMIT \"${commit}\"\n")
set(old "")
if (EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif ()
if (NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif ()
