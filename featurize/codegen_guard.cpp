#include "featurize/codegen_guard.h"

#include <Halide.h>

namespace schedforge::featurize {
namespace {

using namespace Halide::Internal;

class ForgetConstantStridedAlignment : public IRMutator {
    using IRMutator::visit;

    Halide::Expr visit(const Load *op) override {
        Halide::Expr index = mutate(op->index), predicate = mutate(op->predicate);
        const Ramp *ramp = index.as<Ramp>();
        const bool constant_strided = ramp && ramp->base.as<IntImm>() && !is_const_one(ramp->stride);
        // Modulus 0 is Halide's "the index is exactly the remainder": the case it mishandles.
        const bool exact = op->alignment.modulus == 0;
        if (constant_strided && exact)
            return Load::make(op->type, op->name, index, op->image, op->param, predicate, ModulusRemainder());
        if (index.same_as(op->index) && predicate.same_as(op->predicate)) return op;
        return Load::make(op->type, op->name, index, op->image, op->param, predicate, op->alignment);
    }
};

} // namespace

void guard_codegen(Halide::Pipeline pipeline) {
    for (const Halide::CustomLoweringPass &pass : pipeline.custom_lowering_passes())
        if (dynamic_cast<const ForgetConstantStridedAlignment *>(pass.pass)) return;
    pipeline.add_custom_lowering_pass(new ForgetConstantStridedAlignment);
}

} // namespace schedforge::featurize
