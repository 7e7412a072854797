// tune's entry point: the command line lives in tune.cpp (tunefuzz::cli::tune_main).
#include "tuner/cli/tune_main.hpp"

int main(int argc, char** argv) {
  return tunefuzz::cli::tune_main(argc, argv);
}
