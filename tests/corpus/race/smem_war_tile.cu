// WAR on a reused shared tile: the next tile is loaded over the one other threads still read,
// because the second __syncthreads() of the loop is missing.
extern "C" __global__ void smem_war_tile_bug(const int* in, int* out, int tiles) {
  __shared__ int tile[64];
  int t = threadIdx.x;
  int acc = 0;
  for (int i = 0; i < tiles; ++i) {
    tile[t] = in[i * 64 + t];
    __syncthreads();
    acc += tile[63 - t];
  }
  out[t] = acc;
}

extern "C" __global__ void smem_war_tile_fixed(const int* in, int* out, int tiles) {
  __shared__ int tile[64];
  int t = threadIdx.x;
  int acc = 0;
  for (int i = 0; i < tiles; ++i) {
    tile[t] = in[i * 64 + t];
    __syncthreads();
    acc += tile[63 - t];
    __syncthreads();
  }
  out[t] = acc;
}
