package console

import (
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamrules/streamrules"
)

// days is the overview's window.
const days = 30

// outcomeOrder is the outcome mix's order and colours: what worked, then what did not,
// then what was only watched.
var outcomeOrder = []streamrules.Outcome{
	streamrules.OutcomeCorrected, streamrules.OutcomeFixed, streamrules.OutcomeComplied,
	streamrules.OutcomeKept, streamrules.OutcomeMissedAgain, streamrules.OutcomeRepeated,
	streamrules.OutcomeRefused, streamrules.OutcomeUnreadable, streamrules.OutcomeShadow, "",
}

type overviewRow struct {
	Name  string
	Mode  string
	Total int64 // in the window
	Chart template.HTML
}

type ruleTotal struct {
	Name  string
	Mode  string
	Fired int64 // ever, from the counters
	Last  time.Time
}

type overviewData struct {
	Since, Until string
	Rows         []overviewRow
	Page, Pages  int
	Mix          template.HTML
	Outcomes     []part
	Top          []ruleTotal
	Never        []ruleTotal
	NeverCount   int
	Rules        int
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rules, err := h.cache.listRules(ctx)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	counters, err := h.cache.ruleCounters(ctx)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	today := h.cfg.now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(days - 1))
	byDay, err := h.cache.firingsByDay(ctx, since, today)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	modes := make(map[string]string, len(rules))
	for i := range rules {
		modes[rules[i].Name] = modeOf(&rules[i])
	}
	labels := make([]string, days)
	for i := range labels {
		labels[i] = since.AddDate(0, 0, i).Format(time.DateOnly)
	}

	// One row per rule that fired in the window, busiest first; rows are sorted by rule.
	var rows []overviewRow
	series := map[string][]int64{}
	for _, d := range byDay {
		i := int(d.Day.Sub(since) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue
		}
		s, ok := series[d.Rule]
		if !ok {
			s = make([]int64, days)
			series[d.Rule] = s
			rows = append(rows, overviewRow{Name: d.Rule, Mode: modes[d.Rule]})
		}
		s[i] += d.N
	}
	for i := range rows {
		for _, n := range series[rows[i].Name] {
			rows[i].Total += n
		}
	}
	slices.SortStableFunc(rows, func(a, b overviewRow) int {
		if a.Total != b.Total {
			return int(b.Total - a.Total)
		}
		return strings.Compare(a.Name, b.Name)
	})
	page, pages, lo, hi := paginate(r, len(rows), h.cfg.PageRows)
	rows = rows[lo:hi]
	for i := range rows {
		if rows[i].Mode == "" {
			rows[i].Mode = "deleted"
		}
		rows[i].Chart = sparkline(series[rows[i].Name], labels, 180, 24)
	}

	d := overviewData{Since: labels[0], Until: labels[days-1], Rows: rows, Page: page, Pages: pages, Rules: len(rules)}
	mix := map[streamrules.Outcome]int64{}
	for _, c := range counters {
		for o, n := range c.ByOutcome {
			mix[o] += n
		}
	}
	for _, o := range outcomeOrder {
		if n := mix[o]; n > 0 {
			label := string(o)
			if label == "" {
				label = "unknown"
			}
			d.Outcomes = append(d.Outcomes, part{Label: label, N: n, Class: "o-" + label})
		}
	}
	d.Mix = stackedBar(d.Outcomes, 600, 20)

	var top []ruleTotal
	for i := range rules {
		ru := &rules[i]
		c, ok := counters[ru.Name]
		var fired int64
		for o, n := range c.ByOutcome {
			if o != streamrules.OutcomeShadow {
				fired += n
			}
		}
		if !ok || fired == 0 && c.ByOutcome[streamrules.OutcomeShadow] == 0 {
			d.NeverCount++
			if len(d.Never) < 50 {
				d.Never = append(d.Never, ruleTotal{Name: ru.Name, Mode: modeOf(ru)})
			}
			continue
		}
		top = append(top, ruleTotal{Name: ru.Name, Mode: modeOf(ru), Fired: fired, Last: c.LastFiredAt})
	}
	slices.SortStableFunc(top, func(a, b ruleTotal) int {
		if a.Fired != b.Fired {
			if a.Fired > b.Fired {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	d.Top = top[:min(10, len(top))]
	h.render(w, r, http.StatusOK, "overview", d)
}

// paginate reads ?page= (1-based) and returns the page, the page count and the bounds of
// the page's rows.
func paginate(r *http.Request, n, per int) (page, pages, lo, hi int) {
	pages = max(1, (n+per-1)/per)
	page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	page = min(max(page, 1), pages)
	lo = min((page-1)*per, n)
	return page, pages, lo, min(lo+per, n)
}
