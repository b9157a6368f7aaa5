// Feature lists as X-macros: a list LIST(X) calls X(name, description) once per feature, and the
// macros here turn one list into a struct's members, its count, and its names(), descriptions()
// and values(). The CPU schedule features (schedule_features.h) and the GPU features
// (gpu_features.h) are both made so.
#pragma once

#define SCHEDFORGE_FEATURE_COUNT(name, doc) +1
#define SCHEDFORGE_FEATURE_DECLARE(name, doc) double name = 0;
#define SCHEDFORGE_FEATURE_NAME(name, doc) #name,
#define SCHEDFORGE_FEATURE_DOC(name, doc) doc,
#define SCHEDFORGE_FEATURE_VALUE(name, doc) name,

// In a .cpp: the definitions of Type::names(), Type::descriptions() and Type::values() (an array
// of `count` doubles) from LIST.
#define SCHEDFORGE_DEFINE_FEATURE_LIST(Type, LIST, count)                                                              \
    const std::vector<std::string> &Type::names() {                                                                    \
        static const std::vector<std::string> n{LIST(SCHEDFORGE_FEATURE_NAME)};                                        \
        return n;                                                                                                      \
    }                                                                                                                  \
    const std::vector<std::string> &Type::descriptions() {                                                             \
        static const std::vector<std::string> d{LIST(SCHEDFORGE_FEATURE_DOC)};                                         \
        return d;                                                                                                      \
    }                                                                                                                  \
    std::array<double, count> Type::values() const { return {LIST(SCHEDFORGE_FEATURE_VALUE)}; }
