// tune's entry point: the command line lives in tune.cpp (tunefuzz::cli::tune_main).
#include "tuner/cli/tune_main.hpp"
#include "tuner/cluster/cluster.hpp"

int main(int argc, char** argv) {
  const tunefuzz::cluster::Session cluster(&argc, &argv);  // MPI ranks, when started by mpirun
  return tunefuzz::cli::tune_main(argc, argv);
}
