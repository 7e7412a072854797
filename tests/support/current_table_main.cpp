// current_table TABLE TEMPLATES OUT: writes TABLE with each template hash set to that of TEMPLATES
// (tests/support/current_table.hpp); tests/downstream/run.sh embeds kernels from such a table.
#include <cstdio>

#include "tests/support/current_table.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: current_table TABLE TEMPLATES OUT\n");
    return 2;
  }
  try {
    tunefuzz::test::write_current_table(argv[1], argv[2], argv[3]);
  } catch (const tunefuzz::Error& e) {
    std::fprintf(stderr, "current_table: %s\n", e.what());
    return 1;
  }
  return 0;
}
