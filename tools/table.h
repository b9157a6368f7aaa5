// A plain-text table with aligned columns, for CLI summaries.
#pragma once

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace schedforge::tools {

// One number as printf's `spec` formats it ("%.2f"), for table cells.
inline std::string format_number(const char *spec, double v) {
    char b[64];
    std::snprintf(b, sizeof b, spec, v);
    return b;
}

class Table {
public:
    explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}

    void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

    void print(std::ostream &out) const {
        std::vector<size_t> width;
        for (const auto &row : rows_) {
            width.resize(std::max(width.size(), row.size()), 0);
            for (size_t i = 0; i < row.size(); i++) width[i] = std::max(width[i], row[i].size());
        }
        for (size_t r = 0; r < rows_.size(); r++) {
            std::string line;
            for (size_t i = 0; i < rows_[r].size(); i++) {
                const bool last = i + 1 == rows_[r].size();
                line += rows_[r][i] + (last ? "" : std::string(width[i] - rows_[r][i].size() + 2, ' '));
            }
            out << line << "\n";
            if (r == 0) {
                size_t total = 0;
                for (size_t i = 0; i < width.size(); i++) total += width[i] + (i + 1 < width.size() ? 2 : 0);
                out << std::string(std::min<size_t>(total, 120), '-') << "\n";
            }
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
};

} // namespace schedforge::tools
