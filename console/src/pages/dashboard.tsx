import { useState } from 'preact/hooks';

import { Loaded, useLoad } from '../ui.tsx';

type Pair = { success: number; failure: number };
type Dashboard = {
  days: Array<{ day: number; signIns: number; registrations: number; tokenExchanges: Pair; webhookDeliveries: Pair }>;
  webhookLatencyP50Ms: number | null;
};
type Series = { label: string; values: number[]; tone: 'good' | 'bad' | 'plain' };

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const dayLabel = (day: number) =>
  new Date(day).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** Stacked daily bars drawn in SVG (no chart library: a few rectangles are all it takes). */
function BarChart({ title, days, series, note }: { title: string; days: number[]; series: Series[]; note?: string }) {
  const width = 300;
  const height = 120;
  const totals = days.map((_, index) => sum(series.map((one) => one.values[index] ?? 0)));
  const top = Math.max(1, ...totals);
  const slot = width / days.length;
  const summary = series.map((one) => `${one.label}: ${sum(one.values)}`).join(', ');
  return (
    <figure class="card chart">
      <figcaption>
        <h2>{title}</h2>
        <p class="legend">
          {series.map((one) => (
            <span key={one.label} class={`key ${one.tone}`}>
              {one.label} <strong>{sum(one.values)}</strong>
            </span>
          ))}
          {note && <span>{note}</span>}
        </p>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height + 16}`} role="img" aria-label={`${title} per day. ${summary}`}>
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        {days.map((day, index) => {
          let y = height;
          return (
            <g key={day}>
              <title>{`${dayLabel(day)}: ${series.map((one) => `${one.label} ${one.values[index] ?? 0}`).join(', ')}`}</title>
              {series.map((one) => {
                const barHeight = ((one.values[index] ?? 0) / top) * (height - 4);
                y -= barHeight;
                return (
                  <rect
                    key={one.label}
                    x={index * slot + slot * 0.15}
                    y={y}
                    width={slot * 0.7}
                    height={barHeight}
                    class={`bar ${one.tone}`}
                  />
                );
              })}
            </g>
          );
        })}
        <text x="0" y={height + 13} class="tick">
          {dayLabel(days[0])}
        </text>
        <text x={width} y={height + 13} class="tick" text-anchor="end">
          {dayLabel(days[days.length - 1])}
        </text>
      </svg>
    </figure>
  );
}

export function DashboardPage() {
  const [range, setRange] = useState<7 | 30>(7);
  const dashboard = useLoad<Dashboard>(`dashboard?days=${range}`);
  return (
    <>
      <h1>Dashboard</h1>
      <div class="range" role="group" aria-label="Period">
        {([7, 30] as const).map((days) => (
          <button key={days} type="button" aria-pressed={range === days} onClick={() => setRange(days)}>
            Last {days} days
          </button>
        ))}
      </div>
      <Loaded state={dashboard}>
        {(data) => {
          const days = data.days.map((entry) => entry.day);
          const delivered = data.days.map((entry) => entry.webhookDeliveries);
          const attempts = sum(delivered.map((pair) => pair.success + pair.failure));
          const rate = attempts
            ? `${Math.round((sum(delivered.map((pair) => pair.success)) / attempts) * 100)}% succeeded`
            : 'no deliveries';
          return (
            <div class="charts">
              <BarChart
                title="Sign-ins"
                days={days}
                series={[{ label: 'Sign-ins', values: data.days.map((entry) => entry.signIns), tone: 'plain' }]}
              />
              <BarChart
                title="Registrations"
                days={days}
                series={[{ label: 'New users', values: data.days.map((entry) => entry.registrations), tone: 'plain' }]}
              />
              <BarChart
                title="Token exchanges"
                days={days}
                series={[
                  { label: 'Succeeded', values: data.days.map((entry) => entry.tokenExchanges.success), tone: 'good' },
                  { label: 'Refused', values: data.days.map((entry) => entry.tokenExchanges.failure), tone: 'bad' },
                ]}
              />
              <BarChart
                title="Webhook deliveries"
                days={days}
                note={`${rate}; median ${data.webhookLatencyP50Ms === null ? '—' : `${data.webhookLatencyP50Ms} ms`}`}
                series={[
                  { label: 'Succeeded', values: delivered.map((pair) => pair.success), tone: 'good' },
                  { label: 'Failed', values: delivered.map((pair) => pair.failure), tone: 'bad' },
                ]}
              />
            </div>
          );
        }}
      </Loaded>
    </>
  );
}
