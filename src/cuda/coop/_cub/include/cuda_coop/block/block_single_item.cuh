// cuda-coop: the one-value-per-thread forms of our block scans, each a tile of one item per thread given to the
// class's K-item form of the same name (as CUB's BlockScan forwards its single-item overloads).
#pragma once

namespace cuda_coop {

// A base of the scan class `Derived` over items of type T (the curiously recurring template pattern): each form
// wraps `in` in a one-item tile, passes the other arguments on unchanged and unwraps the result into `out`.
// Derived names the forms it has with `using` (its own K-item forms would hide them otherwise).
template <typename Derived, typename T>
class BlockSingleItemScans {
  __device__ __forceinline__ Derived& Self() { return *static_cast<Derived*>(this); }

 public:
  template <typename... Args>
  __device__ __forceinline__ void InclusiveScan(const T& in, T& out, Args&&... args) {
    const T tile[1] = {in};
    T result[1];
    Self().InclusiveScan(tile, result, static_cast<Args&&>(args)...);
    out = result[0];
  }

  template <typename... Args>
  __device__ __forceinline__ void ExclusiveScan(const T& in, T& out, Args&&... args) {
    const T tile[1] = {in};
    T result[1];
    Self().ExclusiveScan(tile, result, static_cast<Args&&>(args)...);
    out = result[0];
  }

  template <typename... Args>
  __device__ __forceinline__ void InclusiveSum(const T& in, T& out, Args&&... args) {
    const T tile[1] = {in};
    T result[1];
    Self().InclusiveSum(tile, result, static_cast<Args&&>(args)...);
    out = result[0];
  }

  template <typename... Args>
  __device__ __forceinline__ void ExclusiveSum(const T& in, T& out, Args&&... args) {
    const T tile[1] = {in};
    T result[1];
    Self().ExclusiveSum(tile, result, static_cast<Args&&>(args)...);
    out = result[0];
  }
};

// The same for segmented scans: one value and one head flag per thread, the flag a one-item tile of flags.
template <typename Derived, typename T>
class BlockSingleItemSegmentedScans {
  __device__ __forceinline__ Derived& Self() { return *static_cast<Derived*>(this); }

 public:
  template <typename Flag, typename... Args>
  __device__ __forceinline__ void InclusiveScan(const T& in, T& out, const Flag& head, Args&&... args) {
    const T tile[1] = {in};
    const Flag heads[1] = {head};
    T result[1];
    Self().InclusiveScan(tile, result, heads, static_cast<Args&&>(args)...);
    out = result[0];
  }

  template <typename Flag, typename... Args>
  __device__ __forceinline__ void ExclusiveScan(const T& in, T& out, const Flag& head, Args&&... args) {
    const T tile[1] = {in};
    const Flag heads[1] = {head};
    T result[1];
    Self().ExclusiveScan(tile, result, heads, static_cast<Args&&>(args)...);
    out = result[0];
  }

  template <typename Flag, typename... Args>
  __device__ __forceinline__ void ExclusiveSum(const T& in, T& out, const Flag& head, Args&&... args) {
    const T tile[1] = {in};
    const Flag heads[1] = {head};
    T result[1];
    Self().ExclusiveSum(tile, result, heads, static_cast<Args&&>(args)...);
    out = result[0];
  }
};

}  // namespace cuda_coop
