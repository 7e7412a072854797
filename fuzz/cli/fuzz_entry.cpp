// fuzz's entry point: the command line lives in fuzz.cpp (tunefuzz::cli::fuzz_main).
#include "fuzz/cli/fuzz_main.hpp"

int main(int argc, char** argv) {
  return tunefuzz::cli::fuzz_main(argc, argv);
}
