// Partial results combined by the last CTA to finish (the threadFenceReduction pattern): each
// CTA writes its partial, fences, and takes a ticket; the CTA that draws the last ticket reads
// every partial. Without the fence the partials are not ordered before the ticket.
template <bool kFence>
__device__ void last_block(int* partials, unsigned* ticket, int* out) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = static_cast<int>(blockIdx.x) + 1;
    if (kFence) __threadfence();
    unsigned drawn = atomicInc(ticket, gridDim.x);
    last = drawn == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += partials[b];
    out[0] = sum;
  }
}

extern "C" __global__ void last_block_reduce_bug(int* partials, unsigned* ticket, int* out) {
  last_block<false>(partials, ticket, out);
}
extern "C" __global__ void last_block_reduce_fixed(int* partials, unsigned* ticket, int* out) {
  last_block<true>(partials, ticket, out);
}
