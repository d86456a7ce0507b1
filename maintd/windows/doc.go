// Package windows decides when a campaign or a plan may start work on a
// node: spec.windows, parsed and answered without a cluster (no client
// calls), as maintd/drain decides a plan's next step.
//
// # Windows
//
// An allow window opens each time its schedule fires and stays open for
// its duration. The schedule is a cron expression of five fields (minute,
// hour, day of month, month, day of week) or a descriptor (@daily,
// @weekly, ...), parsed by robfig/cron; it fires at times on the wall clock
// of spec.windows.timeZone, an IANA zone (UTC if empty). A deny window is
// written the same way and closes the time it covers; an excluded date
// (YYYY-MM-DD) closes its whole local day, midnight to midnight, 23 or 25
// hours on the days the clocks change. The open time is the allow windows
// less the deny windows and the excluded dates; with no allow window, all
// time is allowed and only deny and exclude close it. Windows that overlap
// or touch are one window; an open stretch longer than MaxSpan (8 days) is
// seen as windows of MaxSpan back to back.
//
// A window's duration is elapsed time. A window from 01:30 of 3h ends at
// 04:30 on most days, at 03:30 on the wall clock the night the clocks go
// back, and a window from 01:00 of 3h ends at 05:00 the night they go
// forward.
//
// When the clocks go forward, a time in the skipped hour does not exist:
// a window that would start then (02:30 in Europe/Berlin or
// America/New_York) does not open that day, as robfig/cron skips it. When
// the clocks go back, a time in the repeated hour happens twice: a window
// starting then opens once, the first time (summer time); robfig/cron
// would fire twice, and the second is dropped. An hourly schedule
// therefore leaves the repeated hour closed.
//
// # Starting, stopping, carrying over
//
// Work on a node starts only when its forecast p90 plus spec.windows.margin
// fits in the time left in the window (Fits). At the window's end, a node
// in progress goes on for at most maxOverrun (default 0: it pauses there
// and goes on in the next window, Continue), no node starts, and the nodes
// not begun wait for the next window. Plan packs the nodes left into the
// windows to come, in their order and as many at once as the campaign
// allows, and says how many windows they need, when the last one ends and
// when the last node is forecast to finish: the ETA, across windows.
//
// Every query is bounded: Next and Plan look at most Lookahead (400 days)
// ahead for a window, Plan gives up on a node that fits none of 1000
// windows in a row, and a query that would call the schedules more than
// 250,000 times (a spec closed for weeks whose windows come every minute)
// stops there.
//
// The zone database: time.LoadLocation reads the system's, or the copy Go
// embeds where a binary imports time/tzdata.
package windows
