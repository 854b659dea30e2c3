import { useState } from 'preact/hooks';

import { formatDay } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { Loaded, useLoad } from '../ui.tsx';

type Pair = { success: number; failure: number };
type Dashboard = {
  days: Array<{ day: number; signIns: number; registrations: number; tokenExchanges: Pair; webhookDeliveries: Pair }>;
  webhookLatencyP50Ms: number | null;
};
type Series = { label: string; values: number[]; tone: 'good' | 'bad' | 'plain' };

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

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
      <svg viewBox={`0 0 ${width} ${height + 16}`} role="img" aria-label={t('dashboard.perDay', { title, summary })}>
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        {days.map((day, index) => {
          let y = height;
          return (
            <g key={day}>
              <title>{`${formatDay(day)}: ${series.map((one) => `${one.label} ${one.values[index] ?? 0}`).join(', ')}`}</title>
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
          {formatDay(days[0])}
        </text>
        <text x={width} y={height + 13} class="tick" text-anchor="end">
          {formatDay(days[days.length - 1])}
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
      <h1>{t('nav.dashboard')}</h1>
      <div class="range" role="group" aria-label={t('dashboard.period')}>
        {([7, 30] as const).map((days) => (
          <button key={days} type="button" aria-pressed={range === days} onClick={() => setRange(days)}>
            {t('dashboard.lastDays', { count: days })}
          </button>
        ))}
      </div>
      <Loaded state={dashboard}>
        {(data) => {
          const days = data.days.map((entry) => entry.day);
          const delivered = data.days.map((entry) => entry.webhookDeliveries);
          const attempts = sum(delivered.map((pair) => pair.success + pair.failure));
          const rate = attempts
            ? t('dashboard.successRate', {
                percent: Math.round((sum(delivered.map((pair) => pair.success)) / attempts) * 100),
              })
            : t('dashboard.noDeliveries');
          return (
            <div class="charts">
              <BarChart
                title={t('dashboard.signIns')}
                days={days}
                series={[
                  { label: t('dashboard.signIns'), values: data.days.map((entry) => entry.signIns), tone: 'plain' },
                ]}
              />
              <BarChart
                title={t('dashboard.registrations')}
                days={days}
                series={[
                  {
                    label: t('dashboard.newUsers'),
                    values: data.days.map((entry) => entry.registrations),
                    tone: 'plain',
                  },
                ]}
              />
              <BarChart
                title={t('dashboard.tokenExchanges')}
                days={days}
                series={[
                  {
                    label: t('dashboard.succeeded'),
                    values: data.days.map((entry) => entry.tokenExchanges.success),
                    tone: 'good',
                  },
                  {
                    label: t('dashboard.refused'),
                    values: data.days.map((entry) => entry.tokenExchanges.failure),
                    tone: 'bad',
                  },
                ]}
              />
              <BarChart
                title={t('dashboard.webhookDeliveries')}
                days={days}
                note={t('dashboard.median', {
                  rate,
                  latency:
                    data.webhookLatencyP50Ms === null
                      ? t('common.none')
                      : t('dashboard.milliseconds', { count: data.webhookLatencyP50Ms }),
                })}
                series={[
                  { label: t('dashboard.succeeded'), values: delivered.map((pair) => pair.success), tone: 'good' },
                  { label: t('dashboard.failed'), values: delivered.map((pair) => pair.failure), tone: 'bad' },
                ]}
              />
            </div>
          );
        }}
      </Loaded>
    </>
  );
}
