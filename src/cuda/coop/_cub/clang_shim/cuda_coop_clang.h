// cuda-coop: what CCCL's device code needs from a CUDA compiler, for clang's CUDA mode without a CUDA toolkit.
//
// The generated translation unit is compiled by clang (the ziglang wheel) to LLVM bitcode that the CuTe DSL links
// into a kernel and inlines (docs: cutlass, "How it works"). CCCL is shown NVRTC's freestanding configuration
// (-D__CUDACC_RTC__, -U__clang__), so it asks for no C or C++ library; this header supplies the CUDA keywords, the
// built-in variables, the device intrinsics and the few runtime declarations it names instead, each on a clang
// NVPTX builtin. Vector and runtime types come from the CUDA runtime headers (vector_types.h, driver_types.h).
#pragma once

// ---- the generated code's own switch: where clang needs other C++ than NVRTC (_cub/include/cuda_coop headers)
#define CUDA_COOP_CLANG 1

// ---- the compiler CCCL believes it sees
#define __CUDACC__ 1
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#define CUDART_VERSION 13000
#define __CUDART_API_VERSION 13000
#define __NV_BUILTIN_INITIALIZER_LIST 1

// ---- keywords (crt/host_defines.h is skipped: vector_types.h and driver_types.h use these)
#define __HOST_DEFINES_H__
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __grid_constant__ __attribute__((grid_constant))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __inline_hint__
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __align__(n)
#define __thread__ __thread
#define __device_builtin__
#define __device_builtin_texture_type__
#define __device_builtin_surface_type__
#define __cudart_builtin__
#define __location__(a) __annotate__(a)
#define CUDARTAPI
#define CUDARTAPI_CDECL
#define __CUDA_ALIGN__(n) __attribute__((aligned(n)))
#define __NV_TL__

#define __CUDA_COOP_DEVICE static __device__ __forceinline__

// NVRTC predefines these
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef long clock_t;

// ---- std::initializer_list (NVRTC provides it; CCCL includes <initializer_list> only outside NVRTC)
namespace std {
template <class T>
class initializer_list {
  const T* first_;
  size_t size_;
  constexpr initializer_list(const T* first, size_t size) noexcept : first_(first), size_(size) {}

 public:
  using value_type = T;
  using reference = const T&;
  using const_reference = const T&;
  using size_type = size_t;
  using iterator = const T*;
  using const_iterator = const T*;
  constexpr initializer_list() noexcept : first_(nullptr), size_(0) {}
  constexpr size_type size() const noexcept { return size_; }
  constexpr const T* begin() const noexcept { return first_; }
  constexpr const T* end() const noexcept { return first_ + size_; }
};
template <class T>
constexpr const T* begin(initializer_list<T> list) noexcept { return list.begin(); }
template <class T>
constexpr const T* end(initializer_list<T> list) noexcept { return list.end(); }
enum class align_val_t : size_t {};
}  // namespace std

// ---- placement new (NVRTC has it built in; CCCL includes <new> only outside NVRTC)
__host__ __device__ inline void* operator new(size_t, void* where) noexcept { return where; }
__host__ __device__ inline void* operator new[](size_t, void* where) noexcept { return where; }
__host__ __device__ inline void operator delete(void*, void*) noexcept {}
__host__ __device__ inline void operator delete[](void*, void*) noexcept {}

#include <vector_types.h>
#include <driver_types.h>

// ---- built-in variables
// each reads its special register when a member is read (clang's __declspec(property), as clang's own CUDA headers)
#define __CUDA_COOP_BUILTIN_DIM3(TYPE, SREG)                                                              \
  struct TYPE {                                                                                           \
    __declspec(property(get = get_x)) unsigned int x;                                                     \
    __declspec(property(get = get_y)) unsigned int y;                                                     \
    __declspec(property(get = get_z)) unsigned int z;                                                     \
    __CUDA_COOP_DEVICE unsigned int get_x() { return __nvvm_read_ptx_sreg_##SREG##_x(); }                 \
    __CUDA_COOP_DEVICE unsigned int get_y() { return __nvvm_read_ptx_sreg_##SREG##_y(); }                 \
    __CUDA_COOP_DEVICE unsigned int get_z() { return __nvvm_read_ptx_sreg_##SREG##_z(); }                 \
    __device__ operator dim3() const { return dim3(x, y, z); }                                            \
    __device__ operator uint3() const { return uint3{x, y, z}; }                                          \
  };
__CUDA_COOP_BUILTIN_DIM3(__cuda_coop_builtin_tid, tid)
__CUDA_COOP_BUILTIN_DIM3(__cuda_coop_builtin_ctaid, ctaid)
__CUDA_COOP_BUILTIN_DIM3(__cuda_coop_builtin_ntid, ntid)
__CUDA_COOP_BUILTIN_DIM3(__cuda_coop_builtin_nctaid, nctaid)
#undef __CUDA_COOP_BUILTIN_DIM3
extern const __device__ __cuda_coop_builtin_tid threadIdx;
extern const __device__ __cuda_coop_builtin_ctaid blockIdx;
extern const __device__ __cuda_coop_builtin_ntid blockDim;
extern const __device__ __cuda_coop_builtin_nctaid gridDim;
#define warpSize 32

// ---- runtime API names CCCL mentions in device code paths (declarations only; never called on this route)
extern "C" {
__host__ __device__ cudaError_t cudaGetLastError(void);
__host__ __device__ cudaError_t cudaPeekAtLastError(void);
__host__ __device__ const char* cudaGetErrorString(cudaError_t error);
__host__ __device__ const char* cudaGetErrorName(cudaError_t error);
__host__ __device__ cudaError_t cudaGetDevice(int* device);
__host__ __device__ cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
__device__ int printf(const char* format, ...);
__device__ void* malloc(size_t size);
__device__ void free(void* ptr);
__device__ void* memcpy(void* dst, const void* src, size_t count);
__device__ void* memset(void* dst, int value, size_t count);
__device__ void __assertfail(const char* message, const char* file, unsigned line, const char* function,
                             size_t char_size);
}

// ---- floating-point classification (CCCL's freestanding <cmath> falls back on these)
__CUDA_COOP_DEVICE bool isnan(float x) { return __builtin_isnan(x); }
__CUDA_COOP_DEVICE bool isnan(double x) { return __builtin_isnan(x); }
__CUDA_COOP_DEVICE bool isinf(float x) { return __builtin_isinf(x); }
__CUDA_COOP_DEVICE bool isinf(double x) { return __builtin_isinf(x); }
__CUDA_COOP_DEVICE bool isfinite(float x) { return __builtin_isfinite(x); }
__CUDA_COOP_DEVICE bool isfinite(double x) { return __builtin_isfinite(x); }
__CUDA_COOP_DEVICE bool signbit(float x) { return __builtin_signbit(x); }
__CUDA_COOP_DEVICE bool signbit(double x) { return __builtin_signbit(x); }

// ---- synchronisation and control
// __syncthreads is a clang builtin
__CUDA_COOP_DEVICE int __syncthreads_count(int predicate) { return __nvvm_bar0_popc(predicate); }
__CUDA_COOP_DEVICE int __syncthreads_and(int predicate) { return __nvvm_bar0_and(predicate); }
__CUDA_COOP_DEVICE int __syncthreads_or(int predicate) { return __nvvm_bar0_or(predicate); }
__CUDA_COOP_DEVICE void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
__CUDA_COOP_DEVICE void __threadfence() { __nvvm_membar_gl(); }
__CUDA_COOP_DEVICE void __threadfence_block() { __nvvm_membar_cta(); }
__CUDA_COOP_DEVICE void __threadfence_system() { __nvvm_membar_sys(); }
__CUDA_COOP_DEVICE void __trap() { __builtin_trap(); }
__CUDA_COOP_DEVICE void __brkpt() { __asm__ __volatile__("brkpt;"); }
__CUDA_COOP_DEVICE void __nanosleep(unsigned ns) { __nvvm_nanosleep(ns); }
__CUDA_COOP_DEVICE long long clock64() { return __nvvm_read_ptx_sreg_clock64(); }
__CUDA_COOP_DEVICE clock_t clock() { return __nvvm_read_ptx_sreg_clock(); }
__CUDA_COOP_DEVICE unsigned long long __globaltimer() { return __nvvm_read_ptx_sreg_globaltimer(); }

// ---- address spaces (const: a __builtin_assume of them must not be dropped as having side effects)
__attribute__((const)) __CUDA_COOP_DEVICE unsigned __isGlobal(const void* p) { return __nvvm_isspacep_global(p); }
__attribute__((const)) __CUDA_COOP_DEVICE unsigned __isShared(const void* p) { return __nvvm_isspacep_shared(p); }
__attribute__((const)) __CUDA_COOP_DEVICE unsigned __isConstant(const void* p) { return __nvvm_isspacep_const(p); }
__attribute__((const)) __CUDA_COOP_DEVICE unsigned __isLocal(const void* p) { return __nvvm_isspacep_local(p); }
__attribute__((const)) __CUDA_COOP_DEVICE unsigned __isGridConstant(const void* p) { return 0; }
__attribute__((const)) __CUDA_COOP_DEVICE unsigned __isClusterShared(const void* p) {
  return __nvvm_isspacep_shared_cluster(p);
}
__CUDA_COOP_DEVICE size_t __cvta_generic_to_global(const void* p) {
  return (size_t)(__attribute__((address_space(1))) const void*)p;
}
__CUDA_COOP_DEVICE size_t __cvta_generic_to_shared(const void* p) {
  return (size_t)(__attribute__((address_space(3))) const void*)p;
}
__CUDA_COOP_DEVICE size_t __cvta_generic_to_constant(const void* p) {
  return (size_t)(__attribute__((address_space(4))) const void*)p;
}
__CUDA_COOP_DEVICE size_t __cvta_generic_to_local(const void* p) {
  return (size_t)(__attribute__((address_space(5))) const void*)p;
}
__CUDA_COOP_DEVICE void* __cvta_global_to_generic(size_t a) {
  return (void*)(__attribute__((address_space(1))) void*)a;
}
__CUDA_COOP_DEVICE void* __cvta_shared_to_generic(size_t a) {
  return (void*)(__attribute__((address_space(3))) void*)a;
}
__CUDA_COOP_DEVICE void* __cvta_constant_to_generic(size_t a) {
  return (void*)(__attribute__((address_space(4))) void*)a;
}
__CUDA_COOP_DEVICE void* __cvta_local_to_generic(size_t a) {
  return (void*)(__attribute__((address_space(5))) void*)a;
}

// ---- warp votes and shuffles
__CUDA_COOP_DEVICE unsigned __activemask() {
  unsigned mask;
  __asm__ __volatile__("activemask.b32 %0;" : "=r"(mask));
  return mask;
}
__CUDA_COOP_DEVICE unsigned __ballot_sync(unsigned mask, int predicate) { return __nvvm_vote_ballot_sync(mask, predicate); }
__CUDA_COOP_DEVICE int __all_sync(unsigned mask, int predicate) { return __nvvm_vote_all_sync(mask, predicate); }
__CUDA_COOP_DEVICE int __any_sync(unsigned mask, int predicate) { return __nvvm_vote_any_sync(mask, predicate); }
__CUDA_COOP_DEVICE int __uni_sync(unsigned mask, int predicate) { return __nvvm_vote_uni_sync(mask, predicate); }
__CUDA_COOP_DEVICE unsigned __match_any_sync(unsigned mask, unsigned value) { return __nvvm_match_any_sync_i32(mask, value); }
__CUDA_COOP_DEVICE unsigned __match_any_sync(unsigned mask, int value) { return __nvvm_match_any_sync_i32(mask, value); }
__CUDA_COOP_DEVICE unsigned __match_any_sync(unsigned mask, unsigned long long value) {
  return __nvvm_match_any_sync_i64(mask, value);
}
__CUDA_COOP_DEVICE unsigned __match_any_sync(unsigned mask, long long value) {
  return __nvvm_match_any_sync_i64(mask, value);
}
__CUDA_COOP_DEVICE unsigned __match_all_sync(unsigned mask, unsigned value, int* pred) {
  return __nvvm_match_all_sync_i32p(mask, value, pred);
}

// the shuffle's c operand packs the clamp (low bits) and the segment mask (bits 8-12), as CUDA's headers do
#define __CUDA_COOP_SHFL_32(NAME, BUILTIN, FLOAT, CLAMP_OF)                                                      \
  __CUDA_COOP_DEVICE int NAME(unsigned mask, int var, int lane, int width = 32) {                           \
    return BUILTIN(mask, var, lane, CLAMP_OF(width));                                                        \
  }                                                                                                          \
  __CUDA_COOP_DEVICE unsigned NAME(unsigned mask, unsigned var, int lane, int width = 32) {                 \
    return (unsigned)BUILTIN(mask, (int)var, lane, CLAMP_OF(width));                                         \
  }                                                                                                          \
  __CUDA_COOP_DEVICE float NAME(unsigned mask, float var, int lane, int width = 32) {                       \
    return FLOAT(mask, var, lane, CLAMP_OF(width));                                                              \
  }                                                                                                          \
  __CUDA_COOP_DEVICE long long NAME(unsigned mask, long long var, int lane, int width = 32) {               \
    int lo = BUILTIN(mask, (int)var, lane, CLAMP_OF(width));                                                 \
    int hi = BUILTIN(mask, (int)((unsigned long long)var >> 32), lane, CLAMP_OF(width));                     \
    return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);                             \
  }                                                                                                          \
  __CUDA_COOP_DEVICE unsigned long long NAME(unsigned mask, unsigned long long var, int lane, int width = 32) { \
    return (unsigned long long)NAME(mask, (long long)var, lane, width);                                     \
  }                                                                                                          \
  __CUDA_COOP_DEVICE long NAME(unsigned mask, long var, int lane, int width = 32) {                         \
    return (long)NAME(mask, (long long)var, lane, width);                                                   \
  }                                                                                                          \
  __CUDA_COOP_DEVICE unsigned long NAME(unsigned mask, unsigned long var, int lane, int width = 32) {       \
    return (unsigned long)NAME(mask, (long long)var, lane, width);                                          \
  }                                                                                                          \
  __CUDA_COOP_DEVICE double NAME(unsigned mask, double var, int lane, int width = 32) {                     \
    return __builtin_bit_cast(double, NAME(mask, __builtin_bit_cast(long long, var), lane, width));         \
  }
#define __CUDA_COOP_CLAMP_UP(width) (((32 - (width)) << 8))
#define __CUDA_COOP_CLAMP_DOWN(width) ((((32 - (width)) << 8) | 0x1f))
__CUDA_COOP_SHFL_32(__shfl_sync, __nvvm_shfl_sync_idx_i32, __nvvm_shfl_sync_idx_f32, __CUDA_COOP_CLAMP_DOWN)
__CUDA_COOP_SHFL_32(__shfl_up_sync, __nvvm_shfl_sync_up_i32, __nvvm_shfl_sync_up_f32, __CUDA_COOP_CLAMP_UP)
__CUDA_COOP_SHFL_32(__shfl_down_sync, __nvvm_shfl_sync_down_i32, __nvvm_shfl_sync_down_f32, __CUDA_COOP_CLAMP_DOWN)
__CUDA_COOP_SHFL_32(__shfl_xor_sync, __nvvm_shfl_sync_bfly_i32, __nvvm_shfl_sync_bfly_f32, __CUDA_COOP_CLAMP_DOWN)
#undef __CUDA_COOP_SHFL_32

// ---- warp reductions (sm_80 and newer)
__CUDA_COOP_DEVICE unsigned __reduce_add_sync(unsigned mask, unsigned value) {
  return __nvvm_redux_sync_add(value, mask);
}
__CUDA_COOP_DEVICE int __reduce_add_sync(unsigned mask, int value) { return __nvvm_redux_sync_add(value, mask); }
__CUDA_COOP_DEVICE unsigned __reduce_min_sync(unsigned mask, unsigned value) {
  return __nvvm_redux_sync_umin(value, mask);
}
__CUDA_COOP_DEVICE int __reduce_min_sync(unsigned mask, int value) { return __nvvm_redux_sync_min(value, mask); }
__CUDA_COOP_DEVICE unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  return __nvvm_redux_sync_umax(value, mask);
}
__CUDA_COOP_DEVICE int __reduce_max_sync(unsigned mask, int value) { return __nvvm_redux_sync_max(value, mask); }
__CUDA_COOP_DEVICE unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return __nvvm_redux_sync_and(value, mask);
}
__CUDA_COOP_DEVICE unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return __nvvm_redux_sync_or(value, mask);
}
__CUDA_COOP_DEVICE unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return __nvvm_redux_sync_xor(value, mask);
}

// ---- integer intrinsics
__CUDA_COOP_DEVICE int __popc(unsigned x) { return __builtin_popcount(x); }
__CUDA_COOP_DEVICE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__CUDA_COOP_DEVICE int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
__CUDA_COOP_DEVICE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
__CUDA_COOP_DEVICE int __ffs(int x) { return __builtin_ffs(x); }
__CUDA_COOP_DEVICE int __ffsll(long long x) { return __builtin_ffsll(x); }
__CUDA_COOP_DEVICE unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
__CUDA_COOP_DEVICE unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
__CUDA_COOP_DEVICE unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned r;
  __asm__("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(s));
  return r;
}
__CUDA_COOP_DEVICE int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
__CUDA_COOP_DEVICE unsigned __umulhi(unsigned x, unsigned y) {
  return (unsigned)(((unsigned long long)x * y) >> 32);
}
__CUDA_COOP_DEVICE long long __mul64hi(long long x, long long y) { return (long long)(((__int128)x * y) >> 64); }
__CUDA_COOP_DEVICE unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
__CUDA_COOP_DEVICE int __mul24(int x, int y) { return ((x << 8) >> 8) * ((y << 8) >> 8); }
__CUDA_COOP_DEVICE unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
__CUDA_COOP_DEVICE unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return __builtin_elementwise_fshl(hi, lo, shift & 31u);
}
__CUDA_COOP_DEVICE unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  return shift >= 32 ? lo : __builtin_elementwise_fshl(hi, lo, shift);
}
__CUDA_COOP_DEVICE unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return __builtin_elementwise_fshr(hi, lo, shift & 31u);
}
__CUDA_COOP_DEVICE unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  return shift >= 32 ? hi : __builtin_elementwise_fshr(hi, lo, shift);
}
// SIMD on two 16-bit halves: LLVM vector min/max, which the NVPTX back end lowers to min/max.{s,u}16x2 (sm_90)
typedef short __cuda_coop_s16x2 __attribute__((ext_vector_type(2)));
typedef unsigned short __cuda_coop_u16x2 __attribute__((ext_vector_type(2)));
#define __CUDA_COOP_SIMD2(NAME, VECTOR, OP)                                                                  \
  __CUDA_COOP_DEVICE unsigned NAME(unsigned a, unsigned b) {                                                 \
    return __builtin_bit_cast(unsigned, OP(__builtin_bit_cast(VECTOR, a), __builtin_bit_cast(VECTOR, b)));   \
  }
__CUDA_COOP_SIMD2(__vmins2, __cuda_coop_s16x2, __builtin_elementwise_min)
__CUDA_COOP_SIMD2(__vminu2, __cuda_coop_u16x2, __builtin_elementwise_min)
__CUDA_COOP_SIMD2(__vmaxs2, __cuda_coop_s16x2, __builtin_elementwise_max)
__CUDA_COOP_SIMD2(__vmaxu2, __cuda_coop_u16x2, __builtin_elementwise_max)
#undef __CUDA_COOP_SIMD2
__CUDA_COOP_DEVICE int min(int a, int b) { return a < b ? a : b; }
__CUDA_COOP_DEVICE unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__CUDA_COOP_DEVICE long long min(long long a, long long b) { return a < b ? a : b; }
__CUDA_COOP_DEVICE unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__CUDA_COOP_DEVICE int max(int a, int b) { return a > b ? a : b; }
__CUDA_COOP_DEVICE unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__CUDA_COOP_DEVICE long long max(long long a, long long b) { return a > b ? a : b; }
__CUDA_COOP_DEVICE unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---- atomics (relaxed, device scope, as CUDA's atomicAdd and friends)
#define __CUDA_COOP_ATOMIC(NAME, OP, T)                                                                      \
  __CUDA_COOP_DEVICE T NAME(T* address, T value) { return __atomic_##OP(address, value, __ATOMIC_RELAXED); }
#define __CUDA_COOP_ATOMICS(NAME, OP)                                                                        \
  __CUDA_COOP_ATOMIC(NAME, OP, int)                                                                          \
  __CUDA_COOP_ATOMIC(NAME, OP, unsigned)                                                                     \
  __CUDA_COOP_ATOMIC(NAME, OP, unsigned long long)                                                           \
  __CUDA_COOP_ATOMIC(NAME, OP, long long)
__CUDA_COOP_ATOMICS(atomicAdd, fetch_add)
__CUDA_COOP_ATOMICS(atomicAdd_block, fetch_add)
__CUDA_COOP_ATOMICS(atomicSub, fetch_sub)
__CUDA_COOP_ATOMICS(atomicAnd, fetch_and)
__CUDA_COOP_ATOMICS(atomicOr, fetch_or)
__CUDA_COOP_ATOMICS(atomicXor, fetch_xor)
__CUDA_COOP_ATOMICS(atomicMin, fetch_min)
__CUDA_COOP_ATOMICS(atomicMax, fetch_max)
__CUDA_COOP_ATOMICS(atomicExch, exchange_n)
__CUDA_COOP_DEVICE float atomicAdd(float* address, float value) { return __nvvm_atom_add_gen_f(address, value); }
__CUDA_COOP_DEVICE double atomicAdd(double* address, double value) { return __nvvm_atom_add_gen_d(address, value); }
__CUDA_COOP_DEVICE float atomicAdd_block(float* address, float value) { return atomicAdd(address, value); }
__CUDA_COOP_DEVICE double atomicAdd_block(double* address, double value) { return atomicAdd(address, value); }
__CUDA_COOP_DEVICE float atomicExch(float* address, float value) {
  return __builtin_bit_cast(float, atomicExch((unsigned*)address, __builtin_bit_cast(unsigned, value)));
}
#undef __CUDA_COOP_ATOMICS
#undef __CUDA_COOP_ATOMIC
#define __CUDA_COOP_CAS(T)                                                                                   \
  __CUDA_COOP_DEVICE T atomicCAS(T* address, T compare, T value) {                                           \
    __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);        \
    return compare;                                                                                          \
  }
__CUDA_COOP_CAS(int)
__CUDA_COOP_CAS(unsigned)
__CUDA_COOP_CAS(unsigned long long)
#undef __CUDA_COOP_CAS
__CUDA_COOP_DEVICE unsigned atomicInc(unsigned* address, unsigned limit) {
  unsigned old;
  __asm__ __volatile__("atom.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(limit) : "memory");
  return old;
}
__CUDA_COOP_DEVICE unsigned atomicDec(unsigned* address, unsigned limit) {
  unsigned old;
  __asm__ __volatile__("atom.dec.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(limit) : "memory");
  return old;
}

// CUB declares this only outside NVRTC, yet names it in a template that clang looks up at its definition
namespace cub {
template <typename T>
__host__ __device__ T SyncStream(T stream);
}  // namespace cub
