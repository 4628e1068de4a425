// Beet dashboard behaviour. Every page works without it; this adds copy
// buttons, token reveal, confirmation dialogs, the chart and self-refresh.
// No inline script anywhere: the Content-Security-Policy forbids it.
"use strict";
(function () {
  var toastTimer;
  function toast(msg) {
    var t = document.getElementById("toast");
    if (!t) return;
    t.textContent = msg;
    t.classList.add("show");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { t.classList.remove("show"); }, 1800);
  }

  // Copy: the clipboard API where the page is a secure context, else a
  // hidden textarea and execCommand (plain http on a LAN address).
  function copy(text, button) {
    function done() {
      toast("Copied");
      if (button) {
        var was = button.textContent;
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = was; }, 1500);
      }
    }
    function fallback() {
      var ta = document.createElement("textarea");
      ta.value = text;
      ta.setAttribute("readonly", "");
      ta.className = "sr-only";
      document.body.appendChild(ta);
      ta.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(ta);
      if (ok) done(); else toast("Select the text and copy it by hand");
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }

  function setRevealed(scope, on) {
    scope.querySelectorAll(".secret").forEach(function (el) {
      el.textContent = on ? el.dataset.secret : el.dataset.masked;
      if (on) el.setAttribute("data-revealed", ""); else el.removeAttribute("data-revealed");
    });
    scope.querySelectorAll("[data-reveal]").forEach(function (b) {
      b.setAttribute("aria-pressed", on ? "true" : "false");
      b.textContent = on ? "Hide" : "Reveal";
    });
  }

  document.addEventListener("click", function (ev) {
    var t = ev.target.closest("[data-copy], [data-reveal], [data-dialog], [data-close], [data-range]");
    if (!t) return;
    if (t.hasAttribute("data-copy")) {
      copy(t.getAttribute("data-copy"), t);
    } else if (t.hasAttribute("data-reveal")) {
      ev.preventDefault(); // without script, the link loads the page revealed
      var scope = t.closest("section") || document;
      setRevealed(scope, t.getAttribute("aria-pressed") !== "true");
    } else if (t.hasAttribute("data-dialog")) {
      var d = document.getElementById(t.getAttribute("data-dialog"));
      if (d && d.showModal) {
        ev.preventDefault();
        d.showModal();
        // Focus Cancel, not the destructive button, so a second key
        // press cannot confirm by accident.
        var safe = d.querySelector("[data-close]") || d.querySelector("button");
        if (safe) safe.focus();
      }
    } else if (t.hasAttribute("data-close")) {
      var dlg = t.closest("dialog");
      if (dlg) dlg.close();
    } else if (t.hasAttribute("data-range")) {
      document.querySelectorAll("[data-range]").forEach(function (b) {
        b.setAttribute("aria-pressed", b === t ? "true" : "false");
      });
      chartRange = t.getAttribute("data-range");
      drawChart();
    }
  });

  // Copy buttons do nothing without script, so they are hidden until it runs.
  document.querySelectorAll("[data-copy]").forEach(function (b) { b.hidden = false; });

  // The setup page sends the browser's time zone: new beets take it.
  document.querySelectorAll("[data-browser-zone]").forEach(function (i) {
    var z = "";
    try { z = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { z = ""; }
    if (z && !i.value) i.value = z;
    document.querySelectorAll("[data-zone-shown]").forEach(function (s) { if (z) s.textContent = " (" + z + ")"; });
  });

  // Snippets: one tab at a time (without script every snippet shows).
  document.querySelectorAll("[data-tabs]").forEach(function (box) {
    var list = box.querySelector("[role=tablist]");
    var tabs = box.querySelectorAll("[role=tab]");
    function select(tab) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
    }
    list.hidden = false;
    box.classList.add("tabbed");
    tabs.forEach(function (t, i) {
      t.addEventListener("click", function () { select(t); });
      t.addEventListener("keydown", function (ev) {
        var d = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
        if (!d) return;
        var next = tabs[(i + d + tabs.length) % tabs.length];
        select(next);
        next.focus();
      });
    });
    select(tabs[0]);
  });

  // The list's "all on this page" box checks every beet's box; it is
  // hidden until script can make it work.
  document.querySelectorAll("[data-check-all]").forEach(function (c) { c.closest("label").hidden = false; });
  document.addEventListener("change", function (ev) {
    if (!ev.target.hasAttribute("data-check-all")) return;
    document.querySelectorAll("input[name=id][form=bulk]").forEach(function (c) { c.checked = ev.target.checked; });
  });

  // A beet list's find box: hides the options whose name lacks what is
  // typed (the chosen stay), and Enter in it asks the server (the Find
  // button, not the form's default Save), which also searches the beets
  // the list holds no room for.
  document.querySelectorAll("input[data-filter]").forEach(function (box) {
    var sel = document.getElementById(box.getAttribute("data-filter"));
    if (!sel) return;
    function sync() {
      var q = box.value.trim().toLowerCase();
      Array.prototype.forEach.call(sel.options, function (o) {
        o.hidden = !o.selected && q !== "" && o.textContent.toLowerCase().indexOf(q) < 0;
      });
    }
    box.addEventListener("input", sync);
    var find = box.form && box.form.querySelector("[data-find]");
    if (!find) return;
    box.form.addEventListener("submit", function (ev) {
      // A form ignores a submit asked for while its submit event runs.
      if (document.activeElement === box && ev.submitter !== find) { ev.preventDefault(); setTimeout(function () { find.click(); }); }
    });
  });

  // Filters apply as soon as a status is picked.
  document.querySelectorAll("form[data-autosubmit] select").forEach(function (s) {
    s.addEventListener("change", function () { s.form.submit(); });
  });

  // Detection and maintenance forms: show the fields of the chosen mode only.
  document.querySelectorAll("form[data-detection], form[data-window-form]").forEach(function (f) {
    function sync() {
      var m = (f.querySelector("input[name=mode]:checked") || {}).value || "auto";
      f.querySelectorAll("[data-mode]").forEach(function (el) {
        el.hidden = el.getAttribute("data-mode").split(" ").indexOf(m) < 0;
      });
    }
    f.addEventListener("change", sync);
    sync();
  });

  // New beet form: preview the schedule as it is typed. The server reads
  // the fields as the form's submit would (same defaults, same errors) and
  // answers the next expected times, or the field at fault and why.
  document.querySelectorAll("form[data-schedule-preview]").forEach(function (f) {
    var box = document.getElementById("schedule-preview");
    var timer = null, seq = 0;
    var fields = { "detection.cron": "cron", "detection.timezone": "cron_timezone", "detection.period_seconds": "period_minutes",
      "detection.grace_seconds": "grace_minutes", "timezone": "timezone" };
    function show(d) {
      box.textContent = "";
      // Mark the field the preview refuses, as the submit would.
      Object.keys(fields).forEach(function (k) {
        var el = f.elements[fields[k]];
        if (!el) return;
        if (d.field === k) el.setAttribute("aria-invalid", "true"); else el.removeAttribute("aria-invalid");
      });
      if (d.error) {
        var e = document.createElement("p");
        e.className = "field-error";
        e.textContent = d.error;
        box.appendChild(e);
      }
      if (d.expects) {
        var p = document.createElement("p");
        p.textContent = d.expects;
        box.appendChild(p);
      }
      if (d.next && d.next.length) {
        var l = document.createElement("p");
        l.className = "hint";
        l.textContent = d.label;
        box.appendChild(l);
        var ul = document.createElement("ul");
        ul.id = "preview-times";
        d.next.forEach(function (t) { var li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
        box.appendChild(ul);
      }
      box.hidden = !box.firstChild;
    }
    function update() {
      var q = new URLSearchParams();
      ["mode", "period_minutes", "grace_minutes", "cron", "cron_timezone", "timezone"].forEach(function (n) {
        var el = n === "mode" ? f.querySelector("input[name=mode]:checked") : f.elements[n];
        if (el && el.value) q.set(n, el.value);
      });
      var mine = ++seq;
      fetch(f.getAttribute("data-schedule-preview") + "?" + q.toString(), { headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (r) { if (!r.ok) throw new Error("preview: " + r.status); return r.json(); })
        .then(function (d) { if (mine === seq) show(d); })
        .catch(function (e) { console.warn(e); });
    }
    function soon() { clearTimeout(timer); timer = setTimeout(update, 250); }
    f.addEventListener("input", soon);
    f.addEventListener("change", soon);
    update();
  });

  // New channel form: show the fields of the chosen kind only, and leave
  // the others out of the post (without script, all are shown and sent).
  document.querySelectorAll("form[data-channel-form]").forEach(function (f) {
    var kind = f.querySelector("select[name=kind]");
    function sync() {
      f.querySelectorAll("[data-kinds]").forEach(function (el) {
        var off = el.getAttribute("data-kinds").split(" ").indexOf(kind.value) < 0;
        el.hidden = off;
        el.querySelectorAll("input").forEach(function (i) { i.disabled = off; });
      });
    }
    kind.addEventListener("change", sync);
    sync();
  });

  // Chart: events per bucket as bars, the learned band, flips as lines.
  var chartEl = document.getElementById("chart");
  var chartRange = "24h";
  var plot = null;
  var flipColours = { up: "#146c2e", down: "#a51d2d", anomalous: "#8a4b00", learning: "#1a4f8a", paused: "#5e4a00", "new": "#4a4650" };

  // timeAxis labels the time axis as the tables write times: 24-hour
  // "15:00" steps, a "12-04" date under the first and at each new day
  // ("2026-12-04" on the first), or dates alone for steps of a day or more.
  function timeAxis(tz) {
    var hm = uPlot.fmtDate("{HH}:{mm}"), md = uPlot.fmtDate("{MM}-{DD}"), ymd = uPlot.fmtDate("{YYYY}-{MM}-{DD}");
    return { values: function (u, splits, ax, space, incr) {
      var prev = null;
      return splits.map(function (ts, i) {
        var d = uPlot.tzDate(new Date(ts * 1000), tz), day = ymd(d), first = i === 0;
        var label = incr >= 86400 ? (first ? day : md(d)) : hm(d) + (day !== prev ? "\n" + (first ? day : md(d)) : "");
        prev = day;
        return label;
      });
    } };
  }

  function drawChart() {
    if (!chartEl || !window.uPlot) return;
    var tz = chartEl.getAttribute("data-tz") || "UTC";
    fetch(chartEl.getAttribute("data-src") + "?range=" + encodeURIComponent(chartRange), { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("chart: " + r.status); return r.json(); })
      .then(function (d) {
        var data = [d.times, d.counts];
        var series = [{}, {
          label: "Events", stroke: "#7a1f4b", fill: "rgba(122,31,75,0.55)", width: 1,
          paths: uPlot.paths.bars({ size: [0.75, 40] }), points: { show: false }
        }];
        var bands = [];
        var scales = { x: { time: true }, y: { range: function (u, min, max) { return [0, Math.max(1, max * 1.1)]; } } };
        var axes = [timeAxis(tz), { size: 44 }];
        if (d.values) {
          // Values sent in bodies: their average per bucket, on an axis of their own.
          data.push(d.values);
          series.push({ label: "Average value", scale: "v", stroke: "#8a4b00", width: 2, spanGaps: true, points: { show: true, size: 4 } });
          scales.v = { auto: true };
          axes.push({ scale: "v", side: 1, size: 50, grid: { show: false } });
        }
        if (d.band) {
          // The band shades between its own edges, wherever they land
          // among the series (after the values, when there are some).
          var hi = series.length;
          data.push(d.band.hi, d.band.lo, d.band.mid);
          series.push({ label: "Expected (high)", stroke: "rgba(26,95,180,0.5)", width: 1, points: { show: false } });
          series.push({ label: "Expected (low)", stroke: "rgba(26,95,180,0.5)", width: 1, points: { show: false } });
          series.push({ label: "Expected", stroke: "#1a5fb4", width: 1.5, dash: [5, 4], points: { show: false } });
          bands.push({ series: [hi, hi + 1], fill: "rgba(26,95,180,0.15)" });
        }
        var opts = {
          width: Math.max(280, chartEl.clientWidth), height: 240,
          series: series, bands: bands, legend: { show: false },
          tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), tz); },
          scales: scales,
          axes: axes,
          hooks: { draw: [function (u) {
            var ctx = u.ctx;
            ctx.save();
            (d.flips || []).forEach(function (f) {
              var x = Math.round(u.valToPos(f.at, "x", true));
              if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
              ctx.strokeStyle = flipColours[f.to] || "#a51d2d";
              ctx.lineWidth = 2 * devicePixelRatio;
              ctx.beginPath();
              ctx.moveTo(x, u.bbox.top);
              ctx.lineTo(x, u.bbox.top + u.bbox.height);
              ctx.stroke();
            });
            ctx.restore();
          }] }
        };
        if (plot) plot.destroy();
        chartEl.textContent = "";
        plot = new uPlot(opts, data, chartEl);
        drawRuns(d, tz);
        // The legend names only what this chart draws.
        var drawn = { band: !!d.band, values: !!d.values, flips: (d.flips || []).length > 0 };
        document.querySelectorAll("#chart-legend [data-legend]").forEach(function (k) {
          k.hidden = !drawn[k.getAttribute("data-legend")];
        });
        var total = d.counts.reduce(function (a, b) { return a + b; }, 0);
        chartEl.setAttribute("aria-label", total + " events in the last " + d.range +
          (d.flips.length ? ", " + d.flips.length + " state changes marked" : "") + (d.band ? ", with the expected band" : "") +
          (d.values ? ", with the average value sent" : ""));
      })
      .catch(function (e) { console.warn(e); });
  }
  // Run time (job signals): one point per run at its end, successes and
  // failures apart, the run-time limit as a dashed line; hidden without runs.
  var runsBox = document.getElementById("runs");
  var runsEl = document.getElementById("runs-chart");
  var runsPlot = null;
  // dur labels the axis's steps, which are exact (90 s, not 1 min); the
  // chart's text takes the server's words (detect.Duration), as the page.
  function dur(s) {
    if (s < 10) return (Math.round(s * 10) / 10) + " s";
    if (s < 120) return Math.round(s) + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    if (s < 172800) return (Math.round(s / 360) / 10) + " h";
    return Math.round(s / 86400) + " d";
  }
  function drawRuns(d, tz) {
    if (!runsEl || !runsBox) return;
    if (runsPlot) { runsPlot.destroy(); runsPlot = null; }
    runsEl.textContent = "";
    var r = d.runs;
    if (!r || !r.times.length) { runsBox.hidden = true; return; }
    runsBox.hidden = false;
    var ok = r.seconds.map(function (s, i) { return r.failed[i] ? null : s; });
    var bad = r.seconds.map(function (s, i) { return r.failed[i] ? s : null; });
    var x0 = d.times[0], x1 = d.times[d.times.length - 1] + d.step;
    var limit = r.limit_seconds || 0;
    var longest = Math.max.apply(null, r.seconds);
    var opts = {
      width: Math.max(280, runsEl.clientWidth), height: runsEl.clientHeight > 150 ? 160 : 140, legend: { show: false },
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), tz); },
      scales: {
        x: { time: true, range: function () { return [x0, x1]; } },
        y: { range: function () { return [0, Math.max(1, longest, limit) * 1.15]; } }
      },
      // Steps people count in: seconds, minutes, hours.
      axes: [timeAxis(tz), { size: 56, incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800],
        values: function (u, vals) { return vals.map(dur); } }],
      series: [{},
        { label: "Succeeded", stroke: "#146c2e", width: 1, spanGaps: true, points: { show: true, size: 7, fill: "#146c2e" } },
        { label: "Failed", stroke: "#a51d2d", paths: function () { return null; }, points: { show: true, size: 8, fill: "#a51d2d" } }],
      hooks: { draw: [function (u) {
        if (!limit) return;
        var y = Math.round(u.valToPos(limit, "y", true));
        var ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = "#5e4a00";
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.beginPath();
        ctx.moveTo(u.bbox.left, y);
        ctx.lineTo(u.bbox.left + u.bbox.width, y);
        ctx.stroke();
        ctx.restore();
      }] }
    };
    runsPlot = new uPlot(opts, [r.times, ok, bad], runsEl);
    var failed = r.failed.filter(Boolean).length;
    runsEl.setAttribute("aria-label", r.times.length + " runs ended in the last " + d.range +
      (failed ? ", " + failed + " failed" : "") + "; the longest took " + r.longest +
      (r.limit ? "; run-time limit " + r.limit + (r.limit_learned ? " (learned)" : "") : ""));
  }

  if (chartEl) {
    drawChart();
    var lastWidth = chartEl.clientWidth;
    window.addEventListener("resize", function () {
      if (plot && Math.abs(chartEl.clientWidth - lastWidth) > 20) {
        lastWidth = chartEl.clientWidth;
        plot.setSize({ width: Math.max(280, lastWidth), height: 240 });
        if (runsPlot) runsPlot.setSize({ width: Math.max(280, runsEl.clientWidth), height: runsPlot.height });
      }
    });
  }

  // A page shown again after a refused form has the POST's address, which
  // no GET serves: put the page's own in the address bar, so a reload or
  // a bookmark opens the page instead of posting again or a 404.
  var canonical = document.querySelector("link[rel=canonical]");
  if (canonical && canonical.hasAttribute("data-replace") && window.history.replaceState) {
    history.replaceState(null, "", canonical.href);
  }

  // Self-refresh: fetch the page again (its canonical address: not a
  // backtest preview's, which would replay 30 days of events each time)
  // and swap the parts marked data-refresh (by id), so filters, focus and
  // open dialogs survive.
  var parts = document.querySelectorAll("[data-refresh][id]");
  if (parts.length) {
    var every = 1e9;
    parts.forEach(function (p) { every = Math.min(every, Number(p.getAttribute("data-refresh")) || 30); p.served = p.innerHTML; });
    var busy = false;
    setInterval(function () {
      if (busy || document.hidden || document.querySelector("dialog[open]")) return;
      busy = true;
      fetch(canonical ? canonical.href : location.href, { cache: "no-store", headers: { Accept: "text/html" } })
        .then(function (r) {
          if (!r.ok || r.redirected) throw new Error("refresh: " + r.status);
          return r.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          // A new beet's first event: the page becomes the chart and the
          // tables, so load it whole.
          if (document.querySelector("[data-fresh]") && !doc.querySelector("[data-fresh]")) { location.reload(); return; }
          parts.forEach(function (p) {
            var fresh = doc.getElementById(p.id);
            // Compared with what the server sent last (labelCells changes
            // tables after a swap), so an unchanged part is left alone.
            if (!fresh || fresh.innerHTML === (p.served || p.innerHTML)) return;
            p.served = fresh.innerHTML;
            // Checked boxes (the list's bulk selection) survive the swap.
            var checked = {};
            p.querySelectorAll("input[type=checkbox]:checked").forEach(function (c) { checked[c.name + "=" + c.value] = true; });
            p.innerHTML = fresh.innerHTML;
            p.querySelectorAll("input[type=checkbox]").forEach(function (c) { if (checked[c.name + "=" + c.value]) c.checked = true; });
          });
          drawChart();
        })
        .catch(function (e) { console.warn(e); })
        .then(function () { busy = false; });
    }, every * 1000);
  }
  // Tables stack on a phone (app.css): each cell is a line headed by its
  // column's name, so status and reason stay readable without scrolling
  // sideways. Cells refreshed later get their labels on the next swap.
  function labelCells(root) {
    root.querySelectorAll("table").forEach(function (t) {
      // A heading only screen readers see ("Actions") labels nothing.
      var heads = Array.from(t.querySelectorAll("thead th")).map(function (th) {
        var hidden = th.querySelector(".sr-only");
        return hidden && hidden.textContent.trim() === th.textContent.trim() ? "" : th.textContent.trim();
      });
      if (!heads.length) return;
      t.classList.add("stacks");
      t.querySelectorAll("tbody tr").forEach(function (tr) {
        Array.from(tr.children).forEach(function (td, i) {
          if (!heads[i] || td.querySelector(":scope > .cell-label")) return;
          // The label and the value side by side (app.css shows the
          // label on phones only; screen readers have the table's own
          // headings).
          var label = document.createElement("span"), value = document.createElement("span");
          label.className = "cell-label";
          label.setAttribute("aria-hidden", "true");
          label.textContent = heads[i];
          value.className = "cell-value";
          while (td.firstChild) value.appendChild(td.firstChild);
          td.appendChild(label);
          td.appendChild(value);
        });
      });
    });
  }
  labelCells(document);
  new MutationObserver(function (ms) {
    ms.forEach(function (m) { if (m.target.querySelectorAll) labelCells(m.target); });
  }).observe(document.body, { childList: true, subtree: true });

  // Tests (and styles, if ever needed) can tell the behaviour is attached.
  document.documentElement.setAttribute("data-js", "ready");
})();
