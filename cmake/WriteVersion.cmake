# Run at every build (cmake -P): writes OUTPUT with the current commit, rewriting it only when it changed so
# nothing recompiles needlessly. Inputs: SOURCE_DIR, OUTPUT, VERSION.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "#include \"tuner/common/version.hpp\"\nnamespace tunefuzz {\nstd::string tool_version() { return \"${VERSION}\"; }\nstd::string tool_commit() { return \"${commit}\"; }\n}  // namespace tunefuzz\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
