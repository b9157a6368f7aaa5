# One place for the project's warning flags; every schedforge target calls this.
function(schedforge_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
