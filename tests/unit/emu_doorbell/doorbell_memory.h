// SPDX-License-Identifier: BSD-3-Clause
// Test helper: a doorbell page and a doorbell FIFO in one memfd, as the verbs layer shares them
// between processes (page 0: the doorbell page, then the FIFO). Each `map` gives this process its
// own view: the page read-only (trapped) and read-write (to preset contents), the FIFO read-write.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "doorbell/doorbell_fifo.h"
#include "doorbell/trap.h"

namespace mana::emu::doorbell::testing {

class DoorbellMemory {
 public:
  explicit DoorbellMemory(uint32_t fifo_capacity)
      : fifo_bytes_(DoorbellFifo::bytes(fifo_capacity)), capacity_(fifo_capacity) {
    fd_ = memfd_create("doorbell-test", MFD_CLOEXEC);
    if (fd_ >= 0 && ftruncate(fd_, static_cast<off_t>(kTrapPageSize + fifo_bytes_)) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~DoorbellMemory() {
    if (fd_ >= 0) close(fd_);
  }
  DoorbellMemory(const DoorbellMemory&) = delete;
  DoorbellMemory& operator=(const DoorbellMemory&) = delete;

  struct View {
    volatile uint64_t* trapped = nullptr;  // PROT_READ: stores fault
    volatile uint64_t* writable = nullptr;
    DoorbellFifo* fifo = nullptr;
  };

  // Maps a new view; formats the FIFO when `format`, else attaches. Empty View on failure.
  View map(bool format) const {
    View v;
    if (fd_ < 0) return v;
    void* ro = mmap(nullptr, kTrapPageSize, PROT_READ, MAP_SHARED, fd_, 0);
    void* rw = mmap(nullptr, kTrapPageSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    void* fifo = mmap(nullptr, fifo_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                      static_cast<off_t>(kTrapPageSize));
    if (ro == MAP_FAILED || rw == MAP_FAILED || fifo == MAP_FAILED) return v;
    v.trapped = static_cast<volatile uint64_t*>(ro);
    v.writable = static_cast<volatile uint64_t*>(rw);
    v.fifo = format ? DoorbellFifo::init(fifo, capacity_) : DoorbellFifo::attach(fifo);
    return v;
  }
  void unmap(View& v) const {
    if (v.trapped != nullptr) munmap(const_cast<uint64_t*>(v.trapped), kTrapPageSize);
    if (v.writable != nullptr) munmap(const_cast<uint64_t*>(v.writable), kTrapPageSize);
    if (v.fifo != nullptr) munmap(v.fifo, fifo_bytes_);
    v = View{};
  }

 private:
  size_t fifo_bytes_;
  uint32_t capacity_;
  int fd_ = -1;
};

}  // namespace mana::emu::doorbell::testing
