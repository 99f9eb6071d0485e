#pragma once
// Units used across chorus. Names carry units (time_ns, bandwidth_gbps, bytes);
// bandwidths are uni-directional, in Gb/s (10^9 bits per second), as in the papers.
#include <cstdint>
#include <string>
#include <string_view>

namespace chorus {

using Bytes = std::uint64_t;

inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;

// Gb/s -> bytes per ns: 1 Gb/s = 10^9 bit/s = 0.125 byte/ns.
constexpr double gbps_to_bytes_per_ns(double bandwidth_gbps) { return bandwidth_gbps / 8.0; }

// Time to push `bytes` through `bandwidth_gbps`, in ns.
constexpr double transfer_time_ns(double bytes, double bandwidth_gbps) { return bytes * 8.0 / bandwidth_gbps; }

// Parses a byte size: "1048576", "64KiB", "1MiB", "1GiB", "100MB" (decimal, 10^6),
// "1.5GB", "4K" (binary). Throws InputError naming `field` on bad text.
Bytes parse_bytes(std::string_view text, const std::string& field);

// Formats a byte count compactly: "64 MiB", "100 MB", "1000 B".
std::string format_bytes(Bytes bytes);

// A whole number with digit grouping for tables: 726466560 -> "726,466,560" (CSV and JSON keep
// plain numbers). Rounds to the nearest integer.
std::string group_digits(double value);

// What a link may be, so that no model degenerates (a denormal bandwidth makes every transfer
// infinite; an infinite latency, every time): 1 kbit/s .. 1 Pbit/s, and at most 1000 s of latency.
inline constexpr double kMinLinkGbps = 1e-6;
inline constexpr double kMaxLinkGbps = 1e6;
inline constexpr double kMaxLatencyNs = 1e12;
inline bool sane_link_gbps(double gbps) { return gbps >= kMinLinkGbps && gbps <= kMaxLinkGbps; }  // false for NaN
inline bool sane_latency_ns(double ns) { return ns >= 0 && ns <= kMaxLatencyNs; }

// A data rate in Gb/s (how links are specified) as GB/s (how outputs print rates, as nccl-tests).
constexpr double gbps_to_GBps(double gbps) { return gbps / 8.0; }

}  // namespace chorus
