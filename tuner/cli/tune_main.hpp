// The body of the `tune` executable as a function, so tests can drive the real command line in-process
// (tests/test_hostile.cpp); main() only calls it.
#pragma once

namespace tunefuzz::cli {

/// Parses `argv` and runs the subcommand; returns the exit code (0, 1, 2 bad input, 3 no GPU).
int tune_main(int argc, char** argv);

}  // namespace tunefuzz::cli
