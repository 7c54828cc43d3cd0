// The engine-independent parts of a Communicator (communicator.hpp): the host-scalar
// collectives over scalar(), agree() over the scalar and broadcast collectives, and
// parse_device_list for `--gpus`.
#include "tcsolve/runtime/communicator.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::runtime {

double Communicator::sum(double value, CUstream_st* stream) {
  scalar(&value, Element::f64, false, stream);
  return value;
}

std::int64_t Communicator::sum(std::int64_t value, CUstream_st* stream) {
  scalar(&value, Element::i64, false, stream);
  return value;
}

double Communicator::max(double value, CUstream_st* stream) {
  scalar(&value, Element::f64, true, stream);
  return value;
}

Agreement agree(Communicator& comm, int code, const std::string& message, CUstream_st* stream) {
  // the lowest failing rank r as the maximum of size - r over the failing members (0: none)
  const std::int64_t mark = code != 0 ? comm.size() - comm.rank() : 0;
  double top = static_cast<double>(mark);
  comm.scalar(&top, Element::f64, true, stream);
  Agreement a;
  if (top == 0) return a;
  a.rank = comm.size() - static_cast<int>(top);
  // the failing member's code and message: a fixed record, so every member knows its size
  constexpr std::size_t kRecord = 2048;
  std::vector<char> record(kRecord, 0);
  if (comm.rank() == a.rank) {
    std::memcpy(record.data(), &code, sizeof code);
    std::memcpy(record.data() + sizeof code, message.data(), std::min(message.size(), kRecord - sizeof code - 1));
  }
  comm.broadcast_host(record.data(), kRecord, a.rank, stream);
  std::memcpy(&a.code, record.data(), sizeof a.code);
  a.message = std::string(record.data() + sizeof a.code);
  return a;
}

int error_code(const std::exception& e) {
  if (dynamic_cast<const InvalidInput*>(&e)) return 2;
  if (dynamic_cast<const Unavailable*>(&e)) return 4;
  if (dynamic_cast<const Interrupted*>(&e)) return 7;
  return 1;
}

void throw_agreement(const Agreement& a) {
  switch (a.code) {
    case 2: throw Agreed<InvalidInput>(a.message);
    case 4: throw Agreed<Unavailable>(a.message);
    case 7: throw Agreed<Interrupted>(a.message);
    default: throw Agreed<Error>(a.message);
  }
}

std::vector<int> parse_device_list(const std::string& text, int available) {
  const std::string what = "--gpus '" + text + "'";
  if (available < 1) throw Unavailable(what + ": no CUDA device here");
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < available; ++d) devices.push_back(d);
    return devices;
  }
  auto integer = [&](const std::string& item) {
    if (item.empty() || item.size() > 6 || !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw InvalidInput(what + ": expected N, all, or a list of device numbers such as 0,1");
    return std::stoi(item);
  };
  if (text.find(',') == std::string::npos) {  // "N": the first N devices
    const int n = integer(text);
    if (n < 1) throw InvalidInput(what + ": the number of GPUs must be >= 1");
    if (n > available)
      throw InvalidInput(what + ": " + std::to_string(n) + " GPUs asked for, " + std::to_string(available) +
                         " present");
    for (int d = 0; d < n; ++d) devices.push_back(d);
    return devices;
  }
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const int d = integer(item);
    if (d >= available)
      throw InvalidInput(what + ": device " + std::to_string(d) + " does not exist (" + std::to_string(available) +
                         " present: 0.." + std::to_string(available - 1) + ")");
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      throw InvalidInput(what + ": device " + std::to_string(d) + " is listed twice");
    devices.push_back(d);
  }
  if (text.back() == ',') throw InvalidInput(what + ": expected N, all, or a list of device numbers such as 0,1");
  return devices;
}

}  // namespace tcsolve::runtime
