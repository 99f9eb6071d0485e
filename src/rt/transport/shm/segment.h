#pragma once
// A shared-memory segment mapped by every rank of one host.
#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus::rt {

class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates (exclusive) or opens the named segment of `bytes` and maps it.
  static ShmSegment create(const std::string& name, std::size_t bytes);
  static ShmSegment open(const std::string& name, std::size_t bytes);
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ~ShmSegment();
  char* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // Removes the name; the mapping stays valid until every process unmaps it.
  void unlink();

 private:
  static ShmSegment map(const std::string& name, std::size_t bytes, bool create);
  std::string name_;
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace chorus::rt
