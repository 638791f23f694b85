# SVG line plot with logarithmic axes, no dependencies: awk -f plot.awk DATA > out.svg
# DATA lines:  T <title…>            plot title
#              X <label…> / Y <label…> axis labels
#              S <n> <legend…>       series n (1-based, in legend order)
#              P <n> <x> <y>         a point of series n (x, y > 0; others are skipped)
# x is drawn on a log2 scale, y on a log10 scale; each series is a polyline through its
# points in x order, with a marker per point and its value as a label.
function lg(v, b) { return log(v) / log(b) }
function sx(x) { return L + (lg(x, 2) - x0) / (x1 - x0) * PW }
function sy(y) { return T + PH - (lg(y, 10) - y0) / (y1 - y0) * PH }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
function rest(n,   s, i) { s = $n; for (i = n + 1; i <= NF; i++) s = s " " $i; return s }
function num(s) { return s ~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
$1 == "T" { title = rest(2) }
$1 == "X" { xlab = rest(2) }
$1 == "Y" { ylab = rest(2) }
$1 == "S" { name[$2] = rest(3); if ($2 > ns) ns = $2 }
$1 == "P" && num($3) && num($4) && $3 > 0 && $4 > 0 {
	k = ++np[$2]; px[$2, k] = $3; py[$2, k] = $4
	if (!seen++) { xmin = xmax = $3; ymin = ymax = $4 }
	if ($3 < xmin) xmin = $3; if ($3 > xmax) xmax = $3
	if ($4 < ymin) ymin = $4; if ($4 > ymax) ymax = $4
}
END {
	W = 1120; H = 560; L = 90; T = 50; PW = 560; PH = 430
	split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b", col, " ")
	print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" W "\" height=\"" H "\" font-family=\"sans-serif\" font-size=\"12\">"
	print "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>"
	print "<text x=\"" W / 2 "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" esc(title) "</text>"
	if (!seen) { print "<text x=\"" W / 2 "\" y=\"" H / 2 "\" text-anchor=\"middle\">no data</text></svg>"; exit }
	x0 = int(lg(xmin, 2)) - (lg(xmin, 2) < int(lg(xmin, 2)) ? 1 : 0); x1 = lg(xmax, 2); if (x1 <= x0) x1 = x0 + 1
	x0 -= 0.3; x1 += 0.3
	y0 = lg(ymin, 10); y1 = lg(ymax, 10); y0 = (y0 == int(y0) ? y0 : int(y0) - (y0 < 0 ? 1 : 0)); y1 = (y1 == int(y1) ? y1 : int(y1) + (y1 > 0 ? 1 : 0))
	if (y1 <= y0) y1 = y0 + 1
	print "<rect x=\"" L "\" y=\"" T "\" width=\"" PW "\" height=\"" PH "\" fill=\"none\" stroke=\"#444\"/>"
	for (e = y0; e <= y1; e++) {
		for (m = 1; m < 10; m++) {
			v = lg(m, 10) + e; if (v > y1) break
			y = T + PH - (v - y0) / (y1 - y0) * PH
			print "<line x1=\"" L "\" x2=\"" L + PW "\" y1=\"" y "\" y2=\"" y "\" stroke=\"" (m == 1 ? "#bbb" : "#eee") "\"/>"
			if (m == 1) printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, y + 4, 10 ^ e
		}
	}
	for (e = int(x0) + 1; e <= x1; e++) {
		x = L + (e - x0) / (x1 - x0) * PW
		print "<line x1=\"" x "\" x2=\"" x "\" y1=\"" T "\" y2=\"" T + PH "\" stroke=\"#eee\"/>"
		printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x, T + PH + 16, 2 ^ e
	}
	print "<text x=\"" L + PW / 2 "\" y=\"" T + PH + 38 "\" text-anchor=\"middle\">" esc(xlab) "</text>"
	print "<text transform=\"translate(24," T + PH / 2 ") rotate(-90)\" text-anchor=\"middle\">" esc(ylab) "</text>"
	for (s = 1; s <= ns; s++) {
		c = col[(s - 1) % 6 + 1]
		# insertion sort by x
		for (i = 2; i <= np[s]; i++) for (j = i; j > 1 && px[s, j - 1] > px[s, j]; j--) {
			t = px[s, j]; px[s, j] = px[s, j - 1]; px[s, j - 1] = t
			t = py[s, j]; py[s, j] = py[s, j - 1]; py[s, j - 1] = t
		}
		pts = ""
		for (i = 1; i <= np[s]; i++) pts = pts sprintf("%.1f,%.1f ", sx(px[s, i]), sy(py[s, i]))
		if (np[s] > 1) print "<polyline fill=\"none\" stroke=\"" c "\" stroke-width=\"2\" points=\"" pts "\"/>"
		for (i = 1; i <= np[s]; i++) {
			printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", sx(px[s, i]), sy(py[s, i]), c
			printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%g</text>\n", sx(px[s, i]) + 6, sy(py[s, i]) - 5, c, py[s, i]
		}
		ly = T + 10 + (s - 1) * 20
		print "<line x1=\"" L + PW + 14 "\" x2=\"" L + PW + 40 "\" y1=\"" ly "\" y2=\"" ly "\" stroke=\"" c "\" stroke-width=\"2\"/>"
		print "<text x=\"" L + PW + 46 "\" y=\"" ly + 4 "\">" esc(name[s]) (np[s] ? "" : " (not measured)") "</text>"
	}
	print "</svg>"
}
