/* The C entry, compiled as C: a cuBLAS-style call through tunefuzzGemmEx on a table file given as the first
 * argument. Exit 0 when it ran, 3 when there is no usable GPU, 1 otherwise (the status and message printed). */
#include <stdio.h>
#include <tunefuzz/runtime.h>

int main(int argc, char** argv) {
  tunefuzzHandle_t handle = NULL;
  tunefuzzStatus_t status = tunefuzzCreate(&handle, argc > 1 ? argv[1] : "", 0);
  if (status != TUNEFUZZ_STATUS_SUCCESS) {
    printf("tunefuzzCreate: %s: %s\n", tunefuzzGetStatusString(status), tunefuzzGetLastErrorMessage());
    return status == TUNEFUZZ_STATUS_NO_DEVICE ? 3 : 1;
  }
  {
    const float alpha = 1.0f, beta = 0.0f;
    /* m = n = k = 0: a quick return, nothing launched, no operand needed. */
    status = tunefuzzGemmEx(handle, TUNEFUZZ_OP_N, TUNEFUZZ_OP_N, 0, 0, 0, &alpha, NULL, CUDA_R_16BF, 1, NULL,
                            CUDA_R_16BF, 1, &beta, NULL, CUDA_R_16BF, 1, 68 /* CUBLAS_COMPUTE_32F */, -1);
    printf("tunefuzzGemmEx: %s\n", tunefuzzGetStatusString(status));
  }
  tunefuzzDestroy(handle);
  return status == TUNEFUZZ_STATUS_SUCCESS ? 0 : 1;
}
