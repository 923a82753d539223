// Exhaustive check: fast e4m3 conversion == cuda_fp8.h __nv_cvt_float_to_fp8(SATFINITE, E4M3)
#include <cuda_fp8.h>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cmath>
static inline uint32_t f2u(float f){uint32_t u; memcpy(&u,&f,4); return u;}
static inline uint8_t fast(float v){
  const uint32_t sign = (f2u(v) >> 24) & 0x80u;
  const float a = fminf(fabsf(v), 448.f);
  const uint32_t nb = f2u(a);
  const uint32_t r = nb + 0x7FFFFu + ((nb >> 20) & 1u);
  const uint32_t normal = (r >> 20) - (120u << 3);
  const uint32_t sub = static_cast<uint32_t>(static_cast<int>(nearbyintf(a * 512.f)));
  uint32_t mag = a < 0.015625f ? sub : normal;
  return static_cast<uint8_t>((v != v) ? 0x7Fu : (sign | mag));
}
int main(){
  uint64_t bad=0;
  for (uint64_t i=0;i<=0xFFFFFFFFull;i+=1){
    float v; uint32_t u=(uint32_t)i; memcpy(&v,&u,4);
    uint8_t ref=__nv_cvt_float_to_fp8(v,__NV_SATFINITE,__NV_E4M3);
    uint8_t got=fast(v);
    if(ref!=got){ if(bad<10) printf("mismatch %08x %g ref %02x got %02x\n",u,v,ref,got); ++bad; }
  }
  printf("mismatches: %llu of 2^32\n",(unsigned long long)bad);
  return bad!=0;
}
