import { useId } from 'react';

export interface ChartSeries {
  /** Shown in the legend and the table. */
  label: string;
  /** One value per point; null leaves a gap. */
  values: (number | null)[];
  /** A CSS class that colours the line (see styles.css, .chart-line-*). */
  tone: 'a' | 'b';
}

const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 64, right: 8, top: 8, bottom: 20 };

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function path(values: (number | null)[], max: number): string {
  const w = WIDTH - PAD.left - PAD.right;
  const h = HEIGHT - PAD.top - PAD.bottom;
  const step = values.length > 1 ? w / (values.length - 1) : 0;
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null) {
      pen = false;
      return;
    }
    const x = PAD.left + i * step;
    const y = PAD.top + h - (Math.min(v, max) / max) * h;
    d += `${pen ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`;
    pen = true;
  });
  return d;
}

/**
 * A line chart in plain SVG: a few series over the same points, a y axis from 0 with a round top, and
 * the latest values as text beside it (the picture is decorative for screen readers; `summary` says
 * the same in words).
 */
export function LineChart(props: {
  title: string;
  summary: string;
  series: ChartSeries[];
  formatValue: (v: number) => string;
  /** Labels of the first and last points (times). */
  from: string;
  to: string;
  testId: string;
}) {
  const titleId = useId();
  const max = niceMax(Math.max(0, ...props.series.flatMap((s) => s.values.filter((v): v is number => v !== null))));
  const bottom = HEIGHT - PAD.bottom;
  return (
    <figure className="chart" aria-labelledby={titleId} data-testid={props.testId} data-max={max}>
      <figcaption id={titleId}>{props.title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={props.summary} preserveAspectRatio="none">
        <line className="chart-axis" x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={bottom} />
        <line className="chart-axis" x1={PAD.left} y1={bottom} x2={WIDTH - PAD.right} y2={bottom} />
        <text className="chart-tick" x={PAD.left - 4} y={PAD.top + 8} textAnchor="end">
          {props.formatValue(max)}
        </text>
        <text className="chart-tick" x={PAD.left - 4} y={bottom} textAnchor="end">
          {props.formatValue(0)}
        </text>
        <text className="chart-tick" x={PAD.left} y={HEIGHT - 4}>
          {props.from}
        </text>
        <text className="chart-tick" x={WIDTH - PAD.right} y={HEIGHT - 4} textAnchor="end">
          {props.to}
        </text>
        {props.series.map((s) => (
          <path key={s.label} className={`chart-line chart-line-${s.tone}`} d={path(s.values, max)} />
        ))}
      </svg>
      <ul className="chart-legend">
        {props.series.map((s) => (
          <li key={s.label} className={`chart-key-${s.tone}`}>
            {s.label}
          </li>
        ))}
      </ul>
    </figure>
  );
}
