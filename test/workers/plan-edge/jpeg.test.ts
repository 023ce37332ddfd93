import { describeEdgeOf } from './edge';

describeEdgeOf('jpeg-48mp.jpg');
