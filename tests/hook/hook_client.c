/* A program for the drop-in's CPU tests (run-hook-cpu) that links no cuBLAS itself:
     hook_client local LIB  the products of hook_client_products.c run by LIB, which it dlopens
                            with RTLD_LOCAL: where PyTorch keeps its libcublas (RTLD_NEXT from
                            the hook cannot see it there);
     hook_client absent     no cuBLAS in the process: calls cublasSgemm_v2 where the process
                            finds one (the preloaded hook's) and prints the status it returns.
   (hook_client_direct is the same products in a program linked to libcublas.so.13.) */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*SgemmFn)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                       const float*, float*, int);

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "local") == 0) {
    void* lib = dlopen(argc > 2 ? argv[2] : "libhook_client_local.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 2;
    }
    int (*run)(void) = (int (*)(void))dlsym(lib, "run_products");
    return run == NULL ? 2 : run();
  }
  if (strcmp(mode, "absent") == 0) {
    SgemmFn sgemm = (SgemmFn)dlsym(RTLD_DEFAULT, "cublasSgemm_v2");
    if (sgemm == NULL) {
      printf("no cublasSgemm_v2\n");
      return 0;
    }
    float one = 1.0f, zero = 0.0f, a = 1.0f, b = 1.0f, c = 0.0f;
    int handle_storage[4] = {0};
    printf("status %d\n", sgemm(handle_storage, 0, 0, 1, 1, 1, &one, &a, 1, &b, 1, &zero, &c, 1));
    return 0;
  }
  return 2;
}
