// Tensor fusion in a world of one (rt/fusion/fusion.h): the Calls it takes and refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "rt/compression/call_compression.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

// Tensor fusion takes any operation it fuses as a Call, and refuses the others by name: those it
// does not fuse, and compressed calls (compression is the runtime's, not the fusion's).
TEST(Fusion, IssuesTheCallsItFusesAndRefusesTheOthers) {
  rt::init({"shm"});
  {
    rt::Fusion fusion({"shm"});
    std::vector<float> x = {1, 2, 3}, y(3);
    fusion.issue("shm", rt::calls::all_reduce(x.data(), y.data(), 3, DType::f32, ReduceOp::sum)).wait();
    EXPECT_EQ(y, x);  // a world of one
    std::vector<float> z(3);
    fusion.issue("shm", rt::calls::all_to_allv(x.data(), {3}, {0}, z.data(), {3}, {0}, DType::f32)).wait();
    EXPECT_EQ(z, x);
    const auto refusal = [&](rt::Call call) {
      try {
        fusion.issue("shm", std::move(call));
      } catch (const chorus::InputError& e) {
        return std::string(e.what());
      }
      return std::string("accepted");
    };
    EXPECT_NE(refusal(rt::calls::barrier()).find("fused barrier: is not fused"), std::string::npos);
    EXPECT_NE(refusal(rt::calls::all_gatherv(x.data(), 3, y.data(), {3}, {0}, DType::f32)).find("is not fused"),
              std::string::npos);
    EXPECT_NE(refusal(rt::compressed_call(rt::calls::all_reduce(x.data(), y.data(), 3, DType::f32, ReduceOp::sum),
                                          {rt::compressed::ErrorBound::Kind::kAbsolute, 1e-3}))
                  .find("a compressed call is not fused"),
              std::string::npos);
  }
  rt::finalize();
}
