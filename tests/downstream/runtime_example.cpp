// Use the tuned kernels in your program: one GEMM through tunefuzz's runtime, on the tables installed with
// it (tunefuzz::tables) and any kernels compiled into them ahead of time. docs/runtime.md shows this file;
// tests/downstream/run.sh builds it against the installed package, with embedded kernels and without.
// Exit 0 when the GEMM ran, 3 when there is no usable GPU, 1 on any other error.
#include <cuda_runtime.h>
#include <tunefuzz/kernels.hpp>
#include <tunefuzz/runtime.hpp>
#include <tunefuzz/tables.hpp>

#include <cstdio>

int main() {
  namespace rt = tunefuzz::runtime;
  rt::Table table = rt::Table::from_rows(tunefuzz_tables::kRows);
  table.with_images(tunefuzz_tables::kImages);
  std::printf("tables: %zu rows, %zu embedded images\n", table.rows.size(), table.images.size());
  try {
    const rt::Handle handle(std::move(table));  // GPU 0; kernels load on first use
    // C (m x n, bf16, row-major) = A (m x k, row-major) * B (k x n, row-major).
    rt::Problem problem;
    problem.m = 4096, problem.n = 4096, problem.k = 4096;
    problem.a = problem.b = problem.c = rt::Type::bf16;
    problem.lda = problem.k, problem.ldb = problem.n, problem.ldc = problem.n;
    rt::Operands operands;
    const size_t element = 2;
    cudaMalloc(const_cast<void**>(&operands.a), problem.m * problem.k * element);
    cudaMalloc(const_cast<void**>(&operands.b), problem.k * problem.n * element);
    cudaMalloc(&operands.c, problem.m * problem.n * element);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    std::printf("%s on %s: %s\n", "4096x4096x4096 bf16", handle.device_name().c_str(),
                handle.choose(problem, operands).explain().c_str());
    handle.gemm(problem, operands, stream);  // enqueued; returns at once
    const cudaError_t done = cudaStreamSynchronize(stream);
    std::printf("gemm: %s\n", cudaGetErrorString(done));
    return done == cudaSuccess ? 0 : 1;
  } catch (const tunefuzz::Error& e) {
    std::fprintf(stderr, "tunefuzz: %s\n", e.what());
    return e.kind() == tunefuzz::ErrorKind::no_device ? 3 : 1;
  }
}
