// fuzz's entry point: the command line lives in fuzz.cpp (tunefuzz::cli::fuzz_main).
#include "fuzz/cli/fuzz_main.hpp"
#include "tuner/cluster/cluster.hpp"

int main(int argc, char** argv) {
  const tunefuzz::cluster::Session cluster(&argc, &argv);  // MPI ranks, when started by mpirun
  return tunefuzz::cli::fuzz_main(argc, argv);
}
